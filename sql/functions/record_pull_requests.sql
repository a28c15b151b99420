-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Step (d) of the enqueue protocol for writers of many items that hold their zones' pointers FOR
-- KEY SHARE (quick.enqueue_batch, quick.enqueue_batch_into_existing_zones,
-- quick.request_pointer_pulls): per zone, with its lowest key (lowest priority, earliest vesting
-- time: at or below every item's key), record a pull request when the zone's pointer vests later
-- than that and no consumer holds it (or its lease runs past now + quick.limits.max_pointer_lease),
-- or when the key is below the zone's floor; for every zone when always_request. Zones without a
-- pointer are left out. A pointer the caller created itself vests with its items and has no floor.
--
-- Called in a statement after the locks, at READ COMMITTED: it judges each zone on the pointer's
-- newest version, which its new snapshot sees, not on what the lock returned, which can be an
-- older version (docs/protocol.md#the-lock-can-return-an-older-version). The locks, held until
-- the caller commits, keep any settle from raising the floor or parking the zone after this read.
-- Returns the number of requests recorded. Its planner settings (no sequential or bitmap scans,
-- generic plans) are its callers', all SECURITY DEFINER functions that set them.
CREATE OR REPLACE FUNCTION quick.record_pull_requests(tenants text[], vesting_times timestamptz[],
                                                     priorities integer[], always_request boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    requested integer;
    max_lease interval := (SELECT l.max_pointer_lease FROM quick.limits l);
BEGIN
    IF max_lease IS NULL THEN
        PERFORM quick.current_limits();  -- raises: quick.limits has no row
    END IF;
    WITH requests AS (
        INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority)
        SELECT w.tenant, w.vesting_time, w.priority
          FROM (SELECT x.t AS tenant, min(x.v) AS vesting_time, min(x.p) AS priority
                  FROM unnest(tenants, vesting_times, priorities) x(t, v, p) GROUP BY x.t) w
          CROSS JOIN LATERAL (
                SELECT p.vesting_time, p.lease_id, p.floor_priority, p.floor_vesting FROM quick.pointers p
                 WHERE p.tenant >= w.tenant AND p.tenant <= w.tenant  -- a range, not =: see docs/protocol.md#pointer-versions
                 ORDER BY p.tenant DESC LIMIT 1) p  -- Newest version first: LIMIT 1 stops there.
         WHERE always_request
            OR (p.vesting_time > w.vesting_time
                AND (p.lease_id IS NULL OR p.vesting_time > statement_timestamp() + max_lease))
            OR (p.floor_priority IS NOT NULL AND (w.priority, w.vesting_time) < (p.floor_priority, p.floor_vesting))
        RETURNING 1)
    SELECT count(*) INTO requested FROM requests;
    RETURN requested;
END
$$;
REVOKE ALL ON FUNCTION quick.record_pull_requests(text[],timestamp with time zone[],integer[],boolean) FROM PUBLIC;
