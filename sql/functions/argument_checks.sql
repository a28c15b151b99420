-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Validation shared by every entry point. Errors use SQLSTATE 22023 (invalid_parameter_value)
-- and name the offending argument, so clients can report them as they are.
CREATE OR REPLACE FUNCTION quick.check_argument(ok boolean, message text, VARIADIC args text[] DEFAULT '{}')
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format(message, VARIADIC args);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION quick.check_positive_interval(value interval, name text, caller text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF value IS NULL OR value <= interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must be a positive interval, got %s', caller, name,
                             coalesce(value::text, 'NULL'));
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION quick.check_new_item(
               tenant text, job_type text, payload jsonb, vesting_delay interval, client_item_id text,
               max_payload_bytes integer, caller text)
RETURNS void LANGUAGE plpgsql STABLE AS $$
DECLARE
    payload_bytes integer;
BEGIN
    IF tenant IS NULL OR length(tenant) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: tenant must be 1 to 200 characters, got %s', caller,
                             CASE WHEN tenant IS NULL THEN 'NULL'
                                  ELSE length(tenant)::text || ' characters' END);
    END IF;
    IF job_type IS NULL OR length(job_type) NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: job_type must be 1 to 100 characters, got %s', caller,
                             CASE WHEN job_type IS NULL THEN 'NULL'
                                  ELSE length(job_type)::text || ' characters' END);
    END IF;
    IF payload IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: payload must not be NULL (use ''{}'' for no payload)', caller);
    END IF;
    payload_bytes := pg_column_size(payload);
    IF payload_bytes > max_payload_bytes THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: payload is %s bytes, over the maximum of %s bytes '
                             '(setting quick.max_payload_bytes)', caller, payload_bytes,
                             max_payload_bytes);
    END IF;
    IF vesting_delay IS NULL OR vesting_delay < interval '0' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: vesting_delay must be zero or positive, got %s', caller,
                             coalesce(vesting_delay::text, 'NULL'));
    END IF;
    IF client_item_id IS NOT NULL AND length(client_item_id) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: client_item_id must be 1 to 200 characters when given, got %s',
                             caller, length(client_item_id)::text || ' characters');
    END IF;
END
$$;
