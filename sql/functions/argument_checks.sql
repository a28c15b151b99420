-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Validation shared by every entry point. Errors use SQLSTATE 22023 (invalid_parameter_value)
-- and name the function and the offending argument, so clients can report them as they are.
-- docs/bad-input.md lists the checks, with their error texts (its tests run every row).
CREATE OR REPLACE FUNCTION quick.check_argument(ok boolean, message text, VARIADIC args text[] DEFAULT '{}')
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format(message, VARIADIC args);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_argument(boolean,text,text[]) FROM PUBLIC;

-- `caller: name must not be NULL`.
CREATE OR REPLACE FUNCTION quick.check_not_null(is_null boolean, name text, caller text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF is_null IS NOT FALSE THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must not be NULL', caller, name);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_not_null(boolean,text,text) FROM PUBLIC;

-- A duration argument: not NULL, positive (or zero, with allow_zero), and at most `maximum`,
-- the limit quick.limits.<limit_name> holds.
CREATE OR REPLACE FUNCTION quick.check_interval(value interval, name text, caller text, allow_zero boolean,
                                                maximum interval, limit_name text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF value IS NULL OR value < interval '0' OR (value = interval '0' AND NOT allow_zero) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must be %s, got %s', caller, name,
                             CASE WHEN allow_zero THEN 'zero or positive' ELSE 'a positive interval' END,
                             coalesce(value::text, 'NULL'));
    END IF;
    IF value > maximum THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must be at most %s (quick.limits.%s), got %s', caller, name,
                             maximum, limit_name, value);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_interval(interval,text,text,boolean,interval,text) FROM PUBLIC;

-- What an item may be: quick.enqueue inlines the common case of these checks, and calls this
-- function only to raise the error of the first one that fails.
CREATE OR REPLACE FUNCTION quick.check_new_item(tenant text, job_type text, payload jsonb, vesting_delay interval,
                                                client_item_id text, limits quick.limits, caller text)
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
    payload_bytes := octet_length(payload::text);
    IF payload_bytes > limits.max_payload_bytes THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: payload is %s bytes of JSON text, over the maximum of %s bytes '
                             '(quick.limits.max_payload_bytes)', caller, payload_bytes,
                             limits.max_payload_bytes);
    END IF;
    PERFORM quick.check_interval(vesting_delay, 'vesting_delay', caller, true, limits.max_vesting_delay,
                                 'max_vesting_delay');
    IF client_item_id IS NOT NULL AND length(client_item_id) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: client_item_id must be 1 to 200 characters when given, got %s',
                             caller, length(client_item_id)::text || ' characters');
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_new_item(text,text,jsonb,interval,text,quick.limits,text) FROM PUBLIC;

-- A text argument that must not be the empty string: `caller: name must not be empty`, followed
-- by what NULL does instead where NULL is allowed (`null_means`, e.g. 'matches every tenant').
-- An empty tenant or job type can name no zone or item: without this check a filter of '' would
-- match nothing and a lookup would find nothing, both silently.
CREATE OR REPLACE FUNCTION quick.check_not_empty(value text, name text, caller text, null_means text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF value = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must not be empty%s', caller, name,
                             CASE WHEN null_means IS NULL THEN '' ELSE format(' (NULL %s)', null_means) END);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_not_empty(text,text,text,text) FROM PUBLIC;
