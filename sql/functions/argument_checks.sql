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
-- the limit quick.limits.<limit_name> holds. Judged twice: as an interval, and by the time it
-- gives, statement_timestamp() + value, which is what the callers store. The two differ for an
-- interval whose months, days and time have different signs: comparing intervals counts a month
-- as 30 days and a day as 24 hours, adding one to a time counts them by the calendar. So
-- '-1 year 364 days' compares above zero but gives a time in the past, and '10 years -3240 days'
-- compares below 1 year but gives a time 412 days ahead. The time must not be before now (nor
-- now itself, unless allow_zero), and not after now + maximum, by the calendar or counting in
-- 24-hour days (a lease of 24 hours fits a maximum of 1 day on a day of 23 hours too). The
-- interval comparisons come first: they keep a plainly out-of-range value, such as '-10000 years',
-- from overflowing the time. The enqueue functions inline the same comparisons (quick.enqueue,
-- quick.enqueue_batch, both fast paths), and quick.ack_items to filter its delays: they must
-- stay the same, so that whatever a fast path refuses, quick.enqueue refuses too.
CREATE OR REPLACE FUNCTION quick.check_interval(value interval, name text, caller text, allow_zero boolean,
                                                maximum interval, limit_name text)
RETURNS void LANGUAGE plpgsql STABLE AS $$
DECLARE
    now_ts   timestamptz := statement_timestamp();
    too_low  boolean := value IS NULL OR value < interval '0' OR (value = interval '0' AND NOT allow_zero);
    too_high boolean := NOT too_low AND value > maximum;
BEGIN
    IF maximum IS NULL THEN
        PERFORM quick.current_limits();  -- raises when quick.limits has no row, the one way to get here
        RAISE EXCEPTION '%: no maximum for %', caller, name;
    END IF;
    IF NOT too_low AND NOT too_high THEN
        too_low := now_ts + value < now_ts OR (now_ts + value = now_ts AND NOT allow_zero);
        too_high := NOT too_low AND now_ts + value > now_ts + maximum AND (now_ts + value) - now_ts > maximum;
    END IF;
    IF too_low THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('%s: %s must be %s, got %s', caller, name,
                             CASE WHEN allow_zero THEN 'zero or positive' ELSE 'a positive interval' END,
                             coalesce(value::text, 'NULL'));
    END IF;
    IF too_high THEN
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
