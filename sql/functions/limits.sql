-- The limits row (quick.limits, migration 0005), for functions that need several of its values.
-- PL/pgSQL, not SQL: callers read it in a DECLARE default, a simple expression whose state lasts
-- one transaction, and a SQL function called there (one with a FROM clause is never inlined)
-- parses and plans its query again in every transaction; PL/pgSQL keeps the plan for the
-- session. That was about a tenth of a one-zone quick.visit_zones (docs/benchmarks.md#13-steady-load).
-- Without the row (deleted) it raises: every limit would read NULL, and a comparison with NULL
-- passes no check and fails none, so nothing would be bounded. The functions that read one
-- column of quick.limits themselves call it when they find none.
CREATE OR REPLACE FUNCTION quick.current_limits()
RETURNS quick.limits
LANGUAGE plpgsql STABLE AS $$
DECLARE
    limits_row quick.limits;
BEGIN
    SELECT l.* INTO limits_row FROM quick.limits l;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'quick.limits has no row: every limit the SQL functions enforce is read from it, '
                      'so they refuse to run without it',
            HINT = 'Restore it: INSERT INTO quick.limits DEFAULT VALUES; then set again any limit that '
                   'was changed (docs/security.md#limits).';
    END IF;
    RETURN limits_row;
END
$$;
REVOKE ALL ON FUNCTION quick.current_limits() FROM PUBLIC;

-- The largest accepted payload, in bytes of its JSON text (octet_length(payload::text)):
-- quick.limits.max_payload_bytes, 1 MiB unless an administrator changed it.
CREATE OR REPLACE FUNCTION quick.max_payload_bytes()
RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    SELECT (quick.current_limits()).max_payload_bytes
$$;
REVOKE ALL ON FUNCTION quick.max_payload_bytes() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.max_payload_bytes() TO quick_producer, quick_consumer, quick_admin;

-- How far a settle that could not lock its pointer (an enqueuer's transaction holds it) moves
-- the pointer, after `busy_settles` such settles in a row of a zone that had nothing to take:
-- 20 ms, doubling, at most 1 s. Short, because the zone may hold that transaction's item once it
-- commits, and nothing else pulls the pointer in for it.
CREATE OR REPLACE FUNCTION quick.busy_settle_delay(busy_settles integer)
RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT least(interval '20 milliseconds' * power(2, least(greatest(busy_settles, 0), 10)),
                 interval '1 second')
$$;
REVOKE ALL ON FUNCTION quick.busy_settle_delay(integer) FROM PUBLIC;
