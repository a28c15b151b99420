-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Items of these zones vest at these times (a requeue, a released lease): where the zone's
-- pointer vests later than that and no consumer holds it (or its lease runs past now +
-- quick.limits.max_pointer_lease), record a pull request, which a
-- consumer applies after this transaction commits. The pointer is locked FOR KEY SHARE, as by
-- enqueue: a concurrent settle then either waits for this transaction (and sees the item) or has
-- committed what it parked, which this statement sees (READ COMMITTED). Callers under REPEATABLE
-- READ or SERIALIZABLE may see an older pointer version, so they always record a request.
CREATE OR REPLACE FUNCTION quick.request_pointer_pulls(tenants text[], vesting_times timestamptz[])
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    requested integer;
    max_lease interval := (SELECT l.max_pointer_lease FROM quick.limits l);
BEGIN
    WITH wanted AS (
        SELECT w.t AS tenant, min(w.v) AS vesting_time
          FROM unnest(tenants, vesting_times) w(t, v) GROUP BY w.t),
    locked AS (
        SELECT w.tenant, w.vesting_time AS wanted_vesting, p.vesting_time, p.lease_id
          FROM (SELECT * FROM wanted ORDER BY tenant) w
          CROSS JOIN LATERAL (
                SELECT p.vesting_time, p.lease_id FROM quick.pointers p
                 WHERE p.tenant = w.tenant FOR KEY SHARE) p),
    requests AS (
        INSERT INTO quick.pointer_pulls (tenant, vesting_time)
        SELECT l.tenant, l.wanted_vesting FROM locked l
         WHERE (l.vesting_time > l.wanted_vesting
                AND (l.lease_id IS NULL OR l.vesting_time > statement_timestamp() + max_lease))
            OR current_setting('transaction_isolation') <> 'read committed'
        RETURNING 1)
    SELECT count(*) INTO requested FROM requests;
    RETURN requested;
END
$$;
REVOKE ALL ON FUNCTION quick.request_pointer_pulls(text[],timestamp with time zone[]) FROM PUBLIC;
