-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Items of these zones vest at these times, with these priorities (a requeue, a released lease):
-- where the zone's pointer vests later than that and no consumer holds it (or its lease runs past
-- now + quick.limits.max_pointer_lease), or where an item sorts below the zone's floor, record a
-- pull request (with the zone's lowest such key), which a consumer applies after this
-- transaction commits: it pulls the pointer in and lowers the floor. The pointer is locked FOR
-- KEY SHARE, as by enqueue: a concurrent settle (which also raises the floor) then either waits
-- for this transaction (and sees the item) or has committed what it parked and the floor it
-- raised, which quick.record_pull_requests, a new statement with a new snapshot (READ
-- COMMITTED), sees. Not the lock's own result: a KEY SHARE lock can return a version older than
-- that settle (docs/protocol.md#the-lock-can-return-an-older-version). Callers under REPEATABLE READ or
-- SERIALIZABLE may see an older pointer version, so they always record a request.
CREATE OR REPLACE FUNCTION quick.request_pointer_pulls(tenants text[], vesting_times timestamptz[],
                                                      priorities integer[])
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    -- Per zone the earliest vesting time (for the pointer) and the lowest key (for the floor);
    -- (lowest priority, earliest vesting) is at or below every item's key. Zones without a
    -- pointer drop out.
    SELECT array_agg(w.tenant ORDER BY w.tenant), array_agg(w.vesting_time ORDER BY w.tenant),
           array_agg(w.priority ORDER BY w.tenant)
      INTO tenants, vesting_times, priorities
      FROM (SELECT w.t AS tenant, min(w.v) AS vesting_time, min(w.p) AS priority
              FROM unnest(tenants, vesting_times, priorities) w(t, v, p)
             GROUP BY w.t ORDER BY w.t) w
      CROSS JOIN LATERAL (
            SELECT FROM quick.pointers p
             WHERE p.tenant >= w.tenant AND p.tenant <= w.tenant  -- a range, not =: see docs/protocol.md#pointer-versions
             ORDER BY p.tenant DESC LIMIT 1  -- Newest version first: LIMIT 1 stops there.
               FOR KEY SHARE) p;
    RETURN quick.record_pull_requests(tenants, vesting_times, priorities,
                                      current_setting('transaction_isolation') <> 'read committed');
END
$$;
REVOKE ALL ON FUNCTION quick.request_pointer_pulls(text[],timestamp with time zone[],integer[]) FROM PUBLIC;
