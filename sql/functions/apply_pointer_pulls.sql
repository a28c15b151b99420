-- Apply pull requests recorded by enqueue, after their transactions committed. A pointer that a
-- consumer holds is not moved (the holder settles it from the zone's real contents, which include
-- the committed item), unless its lease runs past now + quick.limits.max_pointer_lease. A request
-- that names an item's priority also lowers the zone's floor to that item's key when it is below
-- it (docs/protocol.md#the-zone-floor), whatever the lease. Never waits on a row lock.
--
-- requested_from (NULL: all) leaves out requests made before it: the Scanner passes a floor
-- between its full rounds, so that it does not step over every request applied since a long
-- snapshot began (docs/consumer.md#scanning-from-a-floor).
--
-- Requests are served oldest first, and a request whose pointer is locked right now (a visit, a
-- producer that pulls in its own transaction) is passed over without counting against
-- max_requests: it stays for a later round, and requests stuck behind a long transaction never
-- keep the others from being applied.
CREATE OR REPLACE FUNCTION quick.apply_pointer_pulls(max_requests integer DEFAULT 10000,
                                                    requested_from timestamptz DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    pulled       integer;
    max_lease    interval := (SELECT l.max_pointer_lease FROM quick.limits l);
    req_ids      tid[];
    req_tenants  text[];
    req_vesting  timestamptz[];
    req_priority integer[];
    req_versions tid[];
BEGIN
    IF max_lease IS NULL THEN
        PERFORM quick.current_limits();  -- raises: quick.limits has no row
    END IF;
    PERFORM quick.check_argument(max_requests > 0,
        'quick.apply_pointer_pulls: max_requests must be positive, got %s', coalesce(max_requests::text, 'NULL'));
    -- No look first for whether there is anything to do: quick.scan_pointers, the Scanners' call,
    -- looks before it calls this, and a second look would walk the requests again (under a long
    -- snapshot, each dead one since the floor a heap fetch). With nothing to do, the statement
    -- below reads as far as such a look would, and the function returns 0.
    -- Requests another applier is working on right now are skipped, so appliers never wait. The
    -- requests are read in requested_at order through their index and their pointers locked one
    -- index lookup at a time (LATERAL), lazily: the LIMIT stops the scan once max_requests
    -- requests have a pointer this statement holds, or none at all (gone). A pointer whose newest
    -- version was replaced since this statement's snapshot is passed over like a locked one (the
    -- TID scan's recheck drops it: docs/protocol.md#pointer-versions): its request stays.
    WITH requests AS MATERIALIZED (
        SELECT q.request, q.tenant, q.vesting_time, q.priority, x.version
          FROM (SELECT r.ctid AS request, r.tenant, r.vesting_time, r.priority FROM quick.pointer_pulls r
                 WHERE r.requested_at >= coalesce(requested_from, '-infinity')
                 ORDER BY r.requested_at
                   FOR UPDATE SKIP LOCKED) q
          -- The newest version, found without a lock: one that SKIP LOCKED passes over (a visit
          -- holds it) would send the lookup on through every older version.
          LEFT JOIN LATERAL (
                SELECT n.ctid FROM quick.pointers n
                 WHERE n.tenant >= q.tenant AND n.tenant <= q.tenant  -- a range, not =: see docs/protocol.md#pointer-versions
                 ORDER BY n.tenant DESC LIMIT 1) newest ON true  -- Newest version first.
          LEFT JOIN LATERAL (
                SELECT p.ctid AS version FROM quick.pointers p
                 WHERE p.ctid = newest.ctid
                   FOR NO KEY UPDATE SKIP LOCKED) x ON true
         WHERE x.version IS NOT NULL
            OR newest.ctid IS NULL
         LIMIT max_requests)
    SELECT coalesce(array_agg(r.request), '{}'), coalesce(array_agg(r.tenant), '{}'),
           coalesce(array_agg(r.vesting_time), '{}'), coalesce(array_agg(r.priority), '{}'),
           coalesce(array_agg(r.version), '{}')
      INTO req_ids, req_tenants, req_vesting, req_priority, req_versions
      FROM requests r;
    IF cardinality(req_ids) = 0 THEN
        RETURN 0;
    END IF;
    -- A new statement, so a new snapshot under READ COMMITTED: it sees the versions just locked,
    -- which nobody can change before this transaction ends, and the update reaches each pointer
    -- by its version (a lookup by tenant would walk every older version, docs/protocol.md#pointer-versions).
    WITH requests AS (
        SELECT u.tenant, u.vesting_time, u.priority, u.version
          FROM unnest(req_tenants, req_vesting, req_priority, req_versions) u(tenant, vesting_time, priority, version)),
    -- Per zone the earliest vesting time (for the pointer) and the lowest key a request names
    -- (for the zone's floor; requests recorded before migration 0010 name none).
    wanted AS MATERIALIZED (
        SELECT g.tenant, g.version, g.vesting_time, g.drop_floor, k.priority AS floor_priority,
               k.vesting_time AS floor_vesting
          FROM (SELECT r.tenant, min(r.version) AS version, min(r.vesting_time) AS vesting_time,
                       -- A request that names no key (recorded by code older than migration 0010,
                       -- or by quick.resume_tenant / resume_job_type) drops the zone's floor: scans
                       -- start at the zone's beginning again until a visit raises it.
                       bool_or(r.priority IS NULL) AS drop_floor
                  FROM requests r WHERE r.version IS NOT NULL GROUP BY r.tenant) g
          LEFT JOIN LATERAL (
                SELECT k.priority, k.vesting_time FROM requests k
                 WHERE k.tenant = g.tenant AND k.priority IS NOT NULL
                 ORDER BY k.priority, k.vesting_time LIMIT 1) k ON true),
    -- One update per zone: the pointer pulled in, and the floor lowered to the requests' lowest
    -- key, whatever the pointer's lease (a lease holder settles the pointer, but only a request
    -- lowers a floor). Both are decided in the update, on the version locked.
    pulled_pointers AS (
        UPDATE quick.pointers p
           SET vesting_time = CASE WHEN p.vesting_time > w.vesting_time
                                        AND (p.lease_id IS NULL OR p.vesting_time > statement_timestamp() + max_lease)
                                   THEN w.vesting_time ELSE p.vesting_time END,
               floor_priority = CASE WHEN w.drop_floor THEN NULL
                                     WHEN (w.floor_priority, w.floor_vesting) < (p.floor_priority, p.floor_vesting)
                                     THEN w.floor_priority ELSE p.floor_priority END,
               floor_vesting = CASE WHEN w.drop_floor THEN NULL
                                    WHEN (w.floor_priority, w.floor_vesting) < (p.floor_priority, p.floor_vesting)
                                    THEN w.floor_vesting ELSE p.floor_vesting END
          FROM wanted w
         WHERE p.ctid = ANY (ARRAY(SELECT w2.version FROM wanted w2)) AND p.ctid = w.version
           AND ((p.vesting_time > w.vesting_time
                 AND (p.lease_id IS NULL OR p.vesting_time > statement_timestamp() + max_lease))
                OR (w.drop_floor AND p.floor_priority IS NOT NULL)
                OR (w.floor_priority, w.floor_vesting) < (p.floor_priority, p.floor_vesting))
        RETURNING p.tenant, p.vesting_time = w.vesting_time AS pulled),
    done AS (
        -- Requests are finished when applied, when a lease holder will settle the pointer, or when
        -- the pointer is gone.
        DELETE FROM quick.pointer_pulls r
         WHERE r.ctid = ANY (req_ids)
        RETURNING 1)
    SELECT count(*) FILTER (WHERE pulled_pointers.pulled) INTO pulled FROM pulled_pointers;
    RETURN pulled;
END
$$;
REVOKE ALL ON FUNCTION quick.apply_pointer_pulls(integer,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.apply_pointer_pulls(integer,timestamp with time zone) TO quick_consumer, quick_admin;
