-- Algorithm 2 for a batch of zones: one call, one transaction, one round trip.
--
-- On FoundationDB the paper's Manager leases a pointer, dequeues and settles it in separate
-- transactions, and the pointer lease (a vesting-time bump) keeps the zone its own in between.
-- On Postgres a commit is the unit of cost, so the whole visit is one transaction and the row
-- lock is the lease: other consumers skip the zone while it is visited, and a consumer that dies
-- mid-visit changes nothing (the transaction rolls back, the pointer is still vested).
--
--   1. lock the named zones' pointers that are vested, of tenants not paused. FOR NO KEY UPDATE
--      SKIP LOCKED: never FOR UPDATE, which would skip pointers that enqueuers hold FOR KEY SHARE
--      and starve busy tenants;
--   2. dequeue up to dequeue_max vested items from each zone (item leases), leaving out job types
--      the consumer is throttling and paused job types (quick.paused_job_types), and at most
--      max_bytes of payload (the JSON text's bytes) in
--      all: a visit's result is bounded, so a client that stops reading it cannot keep the
--      server blocked on sending it (and the zones locked) for long;
--   3. a zone that still has vested items, of job types not paused, has more work: its pointer
--      vests again now;
--   4. every other zone is settled with the protocol of quick.settle_pointers (docs/protocol.md):
--      lock FOR UPDATE SKIP LOCKED, which conflicts only with an enqueue in flight; in a NEW
--      statement read the zone and requeue its pointer to the zone's earliest vesting time, park
--      it, or delete it when the zone has been empty for min_inactive. A zone an enqueuer holds
--      right now is released to vest now. The earliest vesting time counts only job types not
--      paused; a zone that holds paused items only is requeued for quick.limits.max_pointer_lease
--      (never collected: it is not empty), and quick.resume_job_type pulls it back. The same
--      statement raises each locked zone's floor to the zone's lowest key (docs/protocol.md#the-zone-floor).
-- Returns one row per dequeued item (kind 'item'), one per zone visited (kind 'pointer', with
-- what happened: requeued, parked, collected, released_busy; and pointer_lag, how long the
-- pointer had been vested), and for each tenant that was not visited one row of kind 'conflict': 'locked' (another consumer was visiting it), 'not_vested' (visited and requeued
-- by someone else since it was peeked) or 'gone'. ready_lag: how long each item had been vested;
-- age: since its enqueue (database clock).
--
-- Every probe and scan of a zone starts at the zone's floor (quick.pointers.floor_priority,
-- floor_vesting: no item sorts below it but those a pull request names), or above it (step 3,
-- at the last item step 2a took), never at the zone's first index entry: entries below the floor
-- belong to consumed items, and while a long snapshot holds vacuum back they pile up
-- (docs/benchmarks.md#10-held-snapshot). Only the decision to collect a zone looks below it.
-- The zone index orders by (priority, zone_time): a lease sets vesting_time only, so leased items
-- keep their places and leave no entries ahead of the floor (docs/protocol.md#zone-time-and-leases);
-- the scans for vested items bound zone_time (the index) and check vesting_time (the row).
--
-- Two things keep a visit's cost proportional to the zones and items it touches:
--   * time linear in the zones visited: the steps' results are carried as one flag per zone in
--     arrays aligned with the visited zones (never `tenant = ANY (array)` per zone, which made a
--     visit of n zones cost about 4 n^2 text comparisons), and step 4a takes its locks one zone
--     at a time in tenant order, so it knows which zone each lock belongs to;
--   * every probe for "does this zone have vested items?" (step 3) asks for the zone's
--     first vested item in the zone index's order, (priority, zone_time) LIMIT 1, and step 2's
--     update also names its rows by an array of ids. An EXISTS probe, or an update joined by id
--     alone, can be planned as a sequential scan when one tenant owns most of quick.items, and
--     then walks the dead row version every lease leaves behind (docs/benchmarks-history.md,
--     migration 0004).
CREATE OR REPLACE FUNCTION quick.visit_zones(tenants text[], dequeue_max integer, item_lease_duration interval,
                                             min_inactive interval, excluded_job_types text[] DEFAULT '{}',
                                             max_bytes bigint DEFAULT 4194304)
RETURNS TABLE (kind text, tenant text, action text, pointer_lag interval,
               item_id bigint, job_type text, priority integer, item_lease_id uuid,
               error_count integer, payload jsonb, enqueued_at timestamptz, client_item_id text,
               last_error text, ready_lag interval, age interval)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    limits          quick.limits := quick.current_limits();
    -- The zones visited (their pointers locked), in tenant order, and per zone, at the same index:
    zone_tenants    text[];
    zone_versions   tid[];           -- the pointer row version step 1 locked (docs/protocol.md#pointer-versions)
    zone_active     timestamptz[];   -- last_active_time
    zone_lag        interval[];      -- how long the pointer had been vested
    zone_found      boolean[];       -- it had vested items to take (step 2a's candidates)
    zone_busy       boolean[];       -- it still has vested items after the dequeue (step 3)
    zone_floor_prio integer[];       -- the zone's floor (where its scans start; -2^31 and
    zone_floor_vest timestamptz[];   -- -infinity when it has none)
    zone_last_prio  integer[];       -- the key of its last candidate in step 2a (NULL: none)
    zone_last_vest  timestamptz[];
    zone_locked     boolean[];       -- step 4a locked it to settle (false for the busy ones)
    -- Step 2's candidates, in zone order and each zone's order.
    cand_ids        bigint[];
    cand_ready      timestamptz[];   -- vesting_time: since when it was available
    cand_place      timestamptz[];   -- zone_time: its place in the zone
    cand_prio       integer[];
    cand_zone       bigint[];
    cand_bytes      integer[];
    cand_total      bigint;
    -- Job types no consumer takes now; with the ones this consumer throttles, those left out.
    paused_types    text[] := ARRAY(SELECT j.job_type FROM quick.paused_job_types j);
    skipped_types   text[];
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_transaction_state',
            MESSAGE = 'quick.visit_zones must run in READ COMMITTED: it settles pointers with the GC protocol';
    END IF;
    PERFORM quick.check_not_null(tenants IS NULL, 'tenants', 'quick.visit_zones');
    PERFORM quick.check_interval(item_lease_duration, 'item_lease_duration', 'quick.visit_zones', false,
                                 limits.max_item_lease, 'max_item_lease');
    PERFORM quick.check_argument(dequeue_max > 0,
        'quick.visit_zones: dequeue_max must be positive, got %s', coalesce(dequeue_max::text, 'NULL'));
    PERFORM quick.check_argument(max_bytes > 0,
        'quick.visit_zones: max_bytes must be positive, got %s', coalesce(max_bytes::text, 'NULL'));
    PERFORM quick.check_interval(min_inactive, 'min_inactive', 'quick.visit_zones', true,
                                 limits.max_min_inactive, 'max_min_inactive');
    skipped_types := coalesce(excluded_job_types, '{}') || paused_types;

    -- 1: lock the vested pointers of the named zones. Whether a zone has vested items to take is
    -- what step 2a finds: a separate probe would walk the same index entries once more.
    SELECT coalesce(array_agg(l.tenant ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.version ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.last_active_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(now_ts - l.vesting_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.floor_prio ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.floor_vest ORDER BY l.tenant), '{}')
      INTO zone_tenants, zone_versions, zone_active, zone_lag, zone_floor_prio, zone_floor_vest
      FROM (SELECT p.tenant, p.ctid AS version, p.last_active_time, p.vesting_time,
                   coalesce(p.floor_priority, -2147483648) AS floor_prio,
                   coalesce(p.floor_vesting, '-infinity') AS floor_vest
              FROM (SELECT DISTINCT u.t FROM unnest(tenants) u(t)) t
             -- One lookup per zone, its newest version first, so LIMIT 1 stops there: a range on
             -- tenant, since with `=` the ORDER BY is redundant and the index is read forwards
             -- (docs/protocol.md#pointer-versions). The lookup neither filters nor locks: a
             -- version it would have to pass over (not vested, or locked by another visit) would
             -- send it on through every older version. The lock is then taken by the version's
             -- ctid. A version replaced since this statement's snapshot is not visited: the lock
             -- follows the update and the TID scan's recheck drops the row (PostgreSQL 15.18;
             -- older minors return the newer version, its conditions checked again), so the zone
             -- is reported 'locked' and waits for a later visit. Nothing is ever written to a
             -- version this visit did not lock (docs/protocol.md#pointer-versions).
             CROSS JOIN LATERAL (
                   SELECT n.ctid FROM quick.pointers n
                    WHERE n.tenant >= t.t AND n.tenant <= t.t  -- a range, not =: see above
                    ORDER BY n.tenant DESC LIMIT 1) newest
             CROSS JOIN LATERAL (
                   SELECT p.ctid, p.tenant, p.last_active_time, p.vesting_time, p.floor_priority, p.floor_vesting
                     FROM quick.pointers p
                    WHERE p.ctid = newest.ctid AND p.vesting_time <= now_ts
                      AND NOT EXISTS (SELECT 1 FROM quick.paused_tenants pt WHERE pt.tenant = p.tenant)
                      FOR NO KEY UPDATE OF p SKIP LOCKED) p) l;
    -- Why the others were not visited (no locks; only the losers are looked at). EXCEPT hashes
    -- or sorts, where `<> ALL (zone_tenants)` would scan the array once per tenant.
    IF cardinality(zone_tenants) < cardinality(tenants) THEN
        RETURN QUERY
        SELECT 'conflict'::text, t.tenant,
               CASE WHEN p.tenant IS NULL THEN 'gone'
                    WHEN p.vesting_time <= now_ts THEN 'locked'
                    ELSE 'not_vested' END,
               NULL::interval, NULL::bigint, NULL::text, NULL::integer, NULL::uuid, NULL::integer,
               NULL::jsonb, NULL::timestamptz, NULL::text, NULL::text, NULL::interval, NULL::interval
          FROM (SELECT u.t AS tenant FROM unnest(tenants) u(t)
                EXCEPT
                SELECT v.t FROM unnest(zone_tenants) v(t)) t
          LEFT JOIN LATERAL (
                SELECT p.tenant, p.vesting_time FROM quick.pointers p
                 WHERE p.tenant >= t.tenant AND p.tenant <= t.tenant  -- newest version first, as above
                 ORDER BY p.tenant DESC LIMIT 1) p ON true;
    END IF;
    IF cardinality(zone_tenants) = 0 THEN
        RETURN;
    END IF;

    -- 2: dequeue from the zones, streaming the leased items out.
    -- 2a: lock the candidates, up to dequeue_max vested items per zone (the zone index from the
    -- zone's floor, in its order: see the header), with each one's zone (its ordinal in
    -- zone_tenants), key and payload size. A zone with a candidate is "found": it had vested
    -- items to take. (One whose vested items all are locked by someone else right now is not.)
    SELECT coalesce(array_agg(c.id ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(array_agg(c.vesting_time ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(array_agg(c.priority ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(array_agg(c.zone_time ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(array_agg(z.n ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(array_agg(c.bytes ORDER BY z.n, c.priority, c.zone_time, c.id), '{}'),
           coalesce(sum(c.bytes), 0)
      INTO cand_ids, cand_ready, cand_prio, cand_place, cand_zone, cand_bytes, cand_total
      FROM unnest(zone_tenants, zone_floor_prio, zone_floor_vest) WITH ORDINALITY z(tenant, fp, fv, n)
      CROSS JOIN LATERAL (
            SELECT i.id, i.priority, i.zone_time, i.vesting_time, octet_length(i.payload::text) AS bytes
              FROM quick.items i
             WHERE i.tenant = z.tenant AND (i.priority, i.zone_time) >= (z.fp, z.fv)
               AND i.zone_time <= now_ts AND i.vesting_time <= now_ts
               AND i.job_type <> ALL (skipped_types)
             ORDER BY i.priority, i.zone_time
             LIMIT dequeue_max
               FOR NO KEY UPDATE SKIP LOCKED) c;
    -- Per zone, aligned with zone_tenants: found, and its last candidate's key (NULL when none),
    -- where step 3 starts. Before 2b, which may leave some candidates out.
    SELECT coalesce(array_agg(c.zone IS NOT NULL ORDER BY z.n), '{}'),
           coalesce(array_agg(c.prio ORDER BY z.n), '{}'), coalesce(array_agg(c.vest ORDER BY z.n), '{}')
      INTO zone_found, zone_last_prio, zone_last_vest
      FROM generate_subscripts(zone_tenants, 1) z(n)
      LEFT JOIN (SELECT DISTINCT ON (u.zone) u.zone, u.prio, u.vest
                   FROM unnest(cand_zone, cand_prio, cand_place) WITH ORDINALITY u(zone, prio, vest, o)
                  ORDER BY u.zone, u.o DESC) c ON c.zone = z.n;

    -- 2b: the byte budget (max_bytes of payload per visit). When the candidates exceed it, it is
    -- filled round robin: every zone's first item, then every zone's second, ..., so that a
    -- zone of big payloads cannot take the whole visit; the first item always goes. Items left
    -- out stay vested (their locks end with this transaction), and step 3 requeues their
    -- zones to vest now. Usually the candidates fit and this costs nothing.
    IF cand_total > max_bytes THEN
        SELECT coalesce(array_agg(x.id ORDER BY x.o), '{}'), coalesce(array_agg(x.ready ORDER BY x.o), '{}')
          INTO cand_ids, cand_ready
          FROM (SELECT y.id, y.ready, y.o, y.bytes,
                       sum(y.bytes) OVER (ORDER BY y.k, y.zone ROWS UNBOUNDED PRECEDING) AS running
                  FROM (SELECT u.id, u.ready, u.zone, u.bytes, u.o,
                               row_number() OVER (PARTITION BY u.zone ORDER BY u.o) AS k
                          FROM unnest(cand_ids, cand_ready, cand_zone, cand_bytes) WITH ORDINALITY
                               u(id, ready, zone, bytes, o)) y) x
         WHERE x.running - x.bytes < max_bytes;
    END IF;
    -- 2c: lease them, streaming the leased items out. The ids as an array, so that the update
    -- reaches its rows through the primary key whatever the table's size (see the header). No
    -- indexed column changes (zone_time stays), so the update can be HOT.
    IF cardinality(cand_ids) > 0 THEN
        RETURN QUERY
        UPDATE quick.items i
           SET lease_id = gen_random_uuid(), vesting_time = now_ts + item_lease_duration
          FROM unnest(cand_ids, cand_ready) chosen(id, ready_at)
         WHERE i.id = chosen.id AND i.id = ANY (cand_ids)
        RETURNING 'item'::text, i.tenant, NULL::text, NULL::interval, i.id, i.job_type, i.priority, i.lease_id,
                  i.error_count, i.payload, i.enqueued_at, i.client_item_id, i.last_error,
                  now_ts - chosen.ready_at, now_ts - i.enqueued_at;
    END IF;

    -- 3: zones that still have vested items after the dequeue (this reads our own writes: the
    -- items just leased no longer vest) vest again now: Algorithm 2's requeue to an earliest
    -- vesting time that is already past. No FOR UPDATE is needed for that: the pointer stays
    -- vested, so no enqueue can be delayed by it, and a plain no-key update does not disturb
    -- REPEATABLE READ / SERIALIZABLE enqueuers the way a FOR UPDATE lock does.
    -- The probe starts at the zone's last candidate, not at its floor: the entries in between
    -- are the ones 2a just walked (while a snapshot holds vacuum back, mostly consumed items').
    -- What it can miss there (a throttled job type's item, one locked by someone else) makes the
    -- zone settle in step 4 instead, which finds it and requeues the zone to
    -- vest now: "busy" only spares that settle.
    SELECT coalesce(array_agg(z.found AND coalesce((SELECT true FROM quick.items i
                                                     WHERE i.tenant = z.t
                                                       AND (i.priority, i.zone_time) >= (z.lp, z.lv)
                                                       AND i.zone_time <= now_ts AND i.vesting_time <= now_ts
                                                       AND i.job_type <> ALL (paused_types)
                                                     ORDER BY i.priority, i.zone_time LIMIT 1), false)
                              ORDER BY z.n), '{}')
      INTO zone_busy
      FROM unnest(zone_tenants, zone_found, zone_last_prio, zone_last_vest) WITH ORDINALITY z(t, found, lp, lv, n);
    -- Tests of the flags, not queries: each statement a visit runs costs it more than its rows do.
    IF true = ANY (zone_busy) THEN
        -- By the versions step 1 locked: a tenant lookup would walk every older version.
        UPDATE quick.pointers p SET vesting_time = now_ts, last_active_time = now_ts, lease_id = NULL, busy_settles = 0
         WHERE p.ctid = ANY (ARRAY(SELECT z.v FROM unnest(zone_versions, zone_busy) z(v, busy) WHERE z.busy));
        RETURN QUERY
        SELECT 'pointer'::text, z.t, 'requeued'::text, z.lag, NULL::bigint, NULL::text, NULL::integer,
               NULL::uuid, NULL::integer, NULL::jsonb, NULL::timestamptz, NULL::text, NULL::text,
               NULL::interval, NULL::interval
          FROM unnest(zone_tenants, zone_lag, zone_busy) z(t, lag, busy)
         WHERE z.busy;
    END IF;
    -- The zones to settle are the visited ones that are not busy: steps 4a and 4b read the
    -- zone arrays, leaving the busy ones out.
    IF NOT (false = ANY (zone_busy)) THEN
        RETURN;
    END IF;

    -- 4a: lock each zone to settle FOR UPDATE SKIP LOCKED, one lookup of the version step 1 locked
    -- per zone in the order of zone_tenants (tenant order; SKIP LOCKED never waits, so the order
    -- cannot deadlock), noting per zone whether the lock was taken. Nobody can write a newer
    -- version meanwhile: step 1's lock conflicts with every other writer of a pointer. It conflicts only with an enqueue in flight.
    -- The lookup is a subquery with a locking clause, which Postgres never flattens into the
    -- outer query, so each zone's lock is taken exactly once however `l` is referenced.
    -- A busy zone is not looked up: `NOT z.busy` refers to the outer row only, so it gates the
    -- lookup (a one-time filter) instead of filtering what the lookup locked.
    SELECT coalesce(array_agg(l.tenant IS NOT NULL ORDER BY z.n), '{}')
      INTO zone_locked
      FROM unnest(zone_versions, zone_busy) WITH ORDINALITY z(v, busy, n)
      LEFT JOIN LATERAL (
            SELECT p.tenant FROM quick.pointers p WHERE NOT z.busy AND p.ctid = z.v FOR UPDATE SKIP LOCKED) l ON true;

    -- 4b: a NEW statement, whose snapshot is taken after those locks and so sees every enqueue
    -- that committed before them: read each locked zone's earliest vesting time and requeue, park
    -- or delete its pointer. A zone left unlocked has an enqueue in flight: it vests now if this
    -- visit found items in it, else after quick.busy_settle_delay, which grows with each such
    -- visit in a row, so a producer idle in its transaction does not get the pointer rewritten
    -- on every Scanner round.
    RETURN QUERY
    WITH zones AS (
        SELECT z.t AS tenant, z.v AS version, z.active AS last_active, z.lag, z.found, z.locked, fv.first_vesting,
               z.fp, k.priority AS lowest_priority, k.zone_time AS lowest_vesting,
               -- Only paused items left.
               (fv.first_vesting IS NULL AND cardinality(paused_types) > 0 AND k.priority IS NOT NULL) AS held,
               -- Nothing from the floor up, and about to be collected: an item below the floor
               -- (its pull request not applied yet, docs/protocol.md#the-zone-floor) must keep the
               -- zone, so only then is the whole zone probed.
               (z.locked AND fv.first_vesting IS NULL AND k.priority IS NULL AND NOT z.found
                AND z.active <= now_ts - min_inactive
                AND coalesce((SELECT true FROM quick.items i WHERE i.tenant = z.t
                               ORDER BY i.priority, i.zone_time LIMIT 1), false)) AS stray
          FROM unnest(zone_tenants, zone_versions, zone_active, zone_lag, zone_found, zone_locked,
                      zone_floor_prio, zone_floor_vest, zone_busy)
               z(t, v, active, lag, found, locked, fp, fv, busy)
          -- The zone's lowest key from its floor up, any job type, leased or not: the floor this
          -- visit raises it to (in the zone index's order, as above).
          LEFT JOIN LATERAL (
                SELECT i.priority, i.zone_time FROM quick.items i
                 WHERE i.tenant = z.t AND (i.priority, i.zone_time) >= (z.fp, z.fv)
                 ORDER BY i.priority, i.zone_time LIMIT 1) k
            ON z.locked
          -- quick.zone_first_vesting from the floor up, inlined (a function call per zone costs
          -- more than its probes), paused job types left out: per priority in use (the first is
          -- k's; the next ones one index probe each), the first item at rest (vesting_time =
          -- zone_time) and the earliest vesting time of the leased items before it. That walks
          -- the leased items and what the zone consumed since its floor, never the entries of
          -- the leases that ended: a lease leaves the item's place (zone_time) alone.
          LEFT JOIN LATERAL (
                WITH RECURSIVE prios AS (
                    -- From the floor in the floor's priority, from the start in the others.
                    SELECT k.priority, CASE WHEN k.priority = z.fp THEN z.fv ELSE '-infinity' END AS from_time
                     WHERE k.priority IS NOT NULL
                    UNION ALL
                    SELECT next.priority, '-infinity'::timestamptz
                      FROM prios f
                      CROSS JOIN LATERAL (
                            SELECT i.priority FROM quick.items i
                             WHERE i.tenant = z.t AND i.priority > f.priority
                             ORDER BY i.priority, i.zone_time LIMIT 1) next)
                SELECT min(least(r.zone_time, l.vesting_time)) AS first_vesting
                  FROM prios p
                  LEFT JOIN LATERAL (
                        SELECT i.zone_time FROM quick.items i
                         WHERE i.tenant = z.t AND i.priority = p.priority
                           AND i.zone_time >= p.from_time
                           AND i.vesting_time = i.zone_time AND i.job_type <> ALL (paused_types)
                         ORDER BY i.zone_time LIMIT 1) r ON true
                  LEFT JOIN LATERAL (
                        SELECT min(i.vesting_time) AS vesting_time FROM quick.items i
                         WHERE i.tenant = z.t AND i.priority = p.priority
                           AND i.zone_time >= p.from_time
                           AND i.zone_time <= coalesce(r.zone_time, 'infinity')
                           AND i.vesting_time <> i.zone_time AND i.job_type <> ALL (paused_types)) l ON true) fv
            ON z.locked
         WHERE NOT z.busy),  -- filters the unnest, before the probes above
    plan AS (
        SELECT z.tenant, z.version, z.lag, z.found,
               CASE WHEN NOT z.locked THEN 'released_busy'
                    WHEN z.first_vesting IS NOT NULL OR z.held OR z.stray THEN 'requeued'
                    WHEN NOT z.found AND z.last_active <= now_ts - min_inactive THEN 'collected'
                    ELSE 'parked' END AS action,
               CASE WHEN NOT z.locked THEN now_ts
                    WHEN z.first_vesting IS NOT NULL THEN greatest(z.first_vesting, now_ts)
                    WHEN z.held THEN now_ts + limits.max_pointer_lease
                    WHEN z.stray THEN now_ts
                    WHEN z.found THEN now_ts + min_inactive
                    ELSE greatest(z.last_active + min_inactive, now_ts) END AS next_vesting,
               -- The raised floor: the zone's lowest key, its vesting time capped at now_ts (a
               -- later enqueue reads its vesting time after this commits, so it sorts at or
               -- above the floor unless its priority is lower). An empty zone keeps its floor's
               -- priority (0 when it had none: the default priority) from now_ts. A zone with
               -- an item below the floor starts again from its beginning.
               CASE WHEN z.stray THEN NULL
                    WHEN z.lowest_priority IS NOT NULL THEN z.lowest_priority
                    WHEN z.fp = -2147483648 THEN 0
                    ELSE z.fp END AS floor_priority,
               CASE WHEN z.stray THEN NULL
                    WHEN z.lowest_priority IS NOT NULL THEN least(z.lowest_vesting, now_ts)
                    ELSE now_ts END AS floor_vesting
          FROM zones z),
    collected AS (
        DELETE FROM quick.pointers p USING plan
         WHERE plan.action = 'collected' AND p.ctid = plan.version
        RETURNING p.tenant),
    settled AS (
        UPDATE quick.pointers p
           SET vesting_time = CASE WHEN plan.action = 'released_busy' AND NOT plan.found
                                   THEN now_ts + quick.busy_settle_delay(p.busy_settles)
                                   ELSE plan.next_vesting END,
               busy_settles = CASE WHEN plan.action = 'released_busy' AND NOT plan.found
                                   THEN least(p.busy_settles + 1, 100) ELSE 0 END,
               lease_id = NULL,
               last_active_time = CASE WHEN plan.found THEN now_ts ELSE p.last_active_time END,
               floor_priority = CASE WHEN plan.action = 'released_busy' THEN p.floor_priority
                                     ELSE plan.floor_priority END,
               floor_vesting = CASE WHEN plan.action = 'released_busy' THEN p.floor_vesting
                                    ELSE plan.floor_vesting END
          FROM plan
         WHERE plan.action <> 'collected' AND p.ctid = plan.version
        RETURNING p.tenant)
    SELECT 'pointer'::text, plan.tenant, plan.action, plan.lag, NULL::bigint, NULL::text,
           NULL::integer, NULL::uuid, NULL::integer, NULL::jsonb, NULL::timestamptz, NULL::text,
           NULL::text, NULL::interval, NULL::interval
      FROM plan;
END
$$;
REVOKE ALL ON FUNCTION quick.visit_zones(text[],integer,interval,interval,text[],bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.visit_zones(text[],integer,interval,interval,text[],bigint) TO quick_consumer, quick_admin;
