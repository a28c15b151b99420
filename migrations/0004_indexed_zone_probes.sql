-- quick-pg schema version 4: quick.visit_zones probes a zone for vested items through the zone
-- index.
--
-- Version 3 asked "does this zone have vested items?" (step 1) and "any left after the dequeue?"
-- (step 3) with EXISTS subqueries. Postgres plans an EXISTS for its first row, and when the
-- statistics say most of quick.items belongs to the tenant (one big zone) it picks a sequential
-- scan, which expects to find a row at once. But every lease moves an item to the end of its
-- zone (a new row version) and leaves the old version dead where the scan starts, until a
-- vacuum; so each probe walked the dead versions of every item leased since, and one tenant's
-- 50,000-item drain slowed from 3.9 to 14.5 ms per visit of 100 items (18 sequential scans in
-- one visit; docs/benchmarks.md, section 3). This version asks for the zone's first vested item
-- in the zone index's order, (priority, vesting_time) LIMIT 1, which Postgres answers from the
-- index whatever the statistics say: a sequential scan would have to read the whole table to
-- sort it. For the same reason step 2's update also names its rows by an array of ids: joined
-- to the chosen items by id alone, it was planned as a hash join over a sequential scan of
-- quick.items when the table held some tens of thousands of rows. Nothing else changes: the
-- protocol (docs/protocol.md) and every result are version 3's (tests/store/visit_zones_test.cc).
--
-- Apply with: psql -v ON_ERROR_STOP=1 -f migrations/0004_indexed_zone_probes.sql (after 0003), or quick migrate.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 3) THEN
        RAISE EXCEPTION 'quick migration 0004 needs migration 0003 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 4) THEN
        RAISE EXCEPTION 'quick migration 0004 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

CREATE OR REPLACE FUNCTION quick.visit_zones(tenants text[], dequeue_max integer, item_lease_duration interval,
                                             min_inactive interval, excluded_job_types text[] DEFAULT '{}')
RETURNS TABLE (kind text, tenant text, action text, pointer_lag interval,
               item_id bigint, job_type text, priority integer, item_lease_id uuid,
               error_count integer, payload jsonb, enqueued_at timestamptz, client_item_id text,
               last_error text, ready_lag interval, age interval)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    -- The zones visited (their pointers locked), in tenant order, and per zone, at the same index:
    zone_tenants    text[];
    zone_active     timestamptz[];   -- last_active_time
    zone_lag        interval[];      -- how long the pointer had been vested
    zone_found      boolean[];       -- it had vested items to take (step 1's probe)
    zone_busy       boolean[];       -- it still has vested items after the dequeue (step 3)
    found_zones     text[];
    busy_zones      text[];
    -- The zones to settle (the visited ones that are not busy), with their flags, and per zone
    -- whether step 4a locked it.
    settle_tenants  text[];
    settle_active   timestamptz[];
    settle_lag      interval[];
    settle_found    boolean[];
    settle_locked   boolean[];
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_transaction_state',
            MESSAGE = 'quick.visit_zones must run in READ COMMITTED: it settles pointers with the GC protocol';
    END IF;
    PERFORM quick.check_positive_interval(item_lease_duration, 'item_lease_duration', 'quick.visit_zones');
    PERFORM quick.check_argument(dequeue_max > 0,
        'quick.visit_zones: dequeue_max must be positive, got %s', coalesce(dequeue_max::text, 'NULL'));
    PERFORM quick.check_argument(min_inactive >= interval '0',
        'quick.visit_zones: min_inactive must be zero or positive, got %s', coalesce(min_inactive::text, 'NULL'));

    -- 1: lock the vested pointers of the named zones and probe which have vested items to take.
    SELECT coalesce(array_agg(l.tenant ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.last_active_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(now_ts - l.vesting_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.active ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.tenant ORDER BY l.tenant) FILTER (WHERE l.active), '{}')
      INTO zone_tenants, zone_active, zone_lag, zone_found, found_zones
      FROM (SELECT p.tenant, p.last_active_time, p.vesting_time,
                   -- Through the zone index, in its order (see the header): not an EXISTS.
                   coalesce((SELECT true FROM quick.items i
                              WHERE i.tenant = p.tenant AND i.vesting_time <= now_ts
                                AND i.job_type <> ALL (coalesce(excluded_job_types, '{}'))
                              ORDER BY i.priority, i.vesting_time LIMIT 1), false) AS active
              FROM quick.pointers p
             WHERE p.tenant = ANY (tenants) AND p.vesting_time <= now_ts
             ORDER BY p.tenant
               FOR NO KEY UPDATE OF p SKIP LOCKED) l;
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
          LEFT JOIN quick.pointers p ON p.tenant = t.tenant;
    END IF;
    IF cardinality(zone_tenants) = 0 THEN
        RETURN;
    END IF;

    -- 2: dequeue from the zones that have vested items, streaming the leased items out.
    IF cardinality(found_zones) > 0 THEN
        RETURN QUERY
        WITH chosen AS MATERIALIZED (
            SELECT c.id, c.vesting_time AS ready_at
              FROM unnest(found_zones) z(tenant)
              CROSS JOIN LATERAL (
                    SELECT i.id, i.vesting_time FROM quick.items i
                     WHERE i.tenant = z.tenant AND i.vesting_time <= now_ts
                       AND i.job_type <> ALL (coalesce(excluded_job_types, '{}'))
                     ORDER BY i.priority, i.vesting_time
                     LIMIT dequeue_max
                       FOR NO KEY UPDATE SKIP LOCKED) c)
        UPDATE quick.items i
           SET lease_id = gen_random_uuid(), vesting_time = now_ts + item_lease_duration
          -- The ids as an array too, so that the update reaches its rows through the primary key
          -- whatever the table's size (see the header).
          FROM chosen WHERE i.id = chosen.id AND i.id = ANY (ARRAY(SELECT c.id FROM chosen c))
        RETURNING 'item'::text, i.tenant, NULL::text, NULL::interval, i.id, i.job_type, i.priority, i.lease_id,
                  i.error_count, i.payload, i.enqueued_at, i.client_item_id, i.last_error,
                  now_ts - chosen.ready_at, now_ts - i.enqueued_at;
    END IF;

    -- 3: zones that still have vested items after the dequeue (this reads our own writes: the
    -- items just leased no longer vest) vest again now. A plain no-key update, no FOR UPDATE:
    -- see version 2.
    SELECT coalesce(array_agg(z.found AND coalesce((SELECT true FROM quick.items i
                                                     WHERE i.tenant = z.t AND i.vesting_time <= now_ts
                                                     ORDER BY i.priority, i.vesting_time LIMIT 1), false)
                              ORDER BY z.n), '{}')
      INTO zone_busy
      FROM unnest(zone_tenants, zone_found) WITH ORDINALITY z(t, found, n);
    busy_zones := ARRAY(SELECT z.t FROM unnest(zone_tenants, zone_busy) WITH ORDINALITY z(t, busy, n)
                         WHERE z.busy ORDER BY z.n);
    IF cardinality(busy_zones) > 0 THEN
        UPDATE quick.pointers p SET vesting_time = now_ts, last_active_time = now_ts, lease_id = NULL
         WHERE p.tenant = ANY (busy_zones);
        RETURN QUERY
        SELECT 'pointer'::text, z.t, 'requeued'::text, z.lag, NULL::bigint, NULL::text, NULL::integer,
               NULL::uuid, NULL::integer, NULL::jsonb, NULL::timestamptz, NULL::text, NULL::text,
               NULL::interval, NULL::interval
          FROM unnest(zone_tenants, zone_lag, zone_busy) z(t, lag, busy)
         WHERE z.busy;
    END IF;
    SELECT coalesce(array_agg(z.t ORDER BY z.n), '{}'), coalesce(array_agg(z.active ORDER BY z.n), '{}'),
           coalesce(array_agg(z.lag ORDER BY z.n), '{}'), coalesce(array_agg(z.found ORDER BY z.n), '{}')
      INTO settle_tenants, settle_active, settle_lag, settle_found
      FROM unnest(zone_tenants, zone_active, zone_lag, zone_found, zone_busy) WITH ORDINALITY
           z(t, active, lag, found, busy, n)
     WHERE NOT z.busy;
    IF cardinality(settle_tenants) = 0 THEN
        RETURN;
    END IF;

    -- 4a: lock each zone to settle FOR UPDATE SKIP LOCKED, one index lookup per zone in the order
    -- of settle_tenants (tenant order; SKIP LOCKED never waits, so the order cannot deadlock),
    -- noting per zone whether the lock was taken. It conflicts only with an enqueue in flight.
    -- The lookup is a subquery with a locking clause, which Postgres never flattens into the
    -- outer query, so each zone's lock is taken exactly once however `l` is referenced.
    SELECT coalesce(array_agg(l.tenant IS NOT NULL ORDER BY z.n), '{}')
      INTO settle_locked
      FROM unnest(settle_tenants) WITH ORDINALITY z(t, n)
      LEFT JOIN LATERAL (
            SELECT p.tenant FROM quick.pointers p WHERE p.tenant = z.t FOR UPDATE SKIP LOCKED) l ON true;

    -- 4b: a NEW statement, whose snapshot is taken after those locks and so sees every enqueue
    -- that committed before them: read each locked zone's earliest vesting time and requeue, park
    -- or delete its pointer; a zone left unlocked has an enqueue in flight and vests now.
    RETURN QUERY
    WITH zones AS (
        SELECT z.t AS tenant, z.active AS last_active, z.lag, z.found, z.locked, fv.first_vesting
          FROM unnest(settle_tenants, settle_active, settle_lag, settle_found, settle_locked)
               z(t, active, lag, found, locked)
          -- quick.zone_first_vesting, inlined (a function call per zone costs more than its probes):
          -- the first entry of each priority in use, then the earliest of those.
          LEFT JOIN LATERAL (
                WITH RECURSIVE firsts AS (
                    (SELECT i.priority, i.vesting_time FROM quick.items i
                      WHERE i.tenant = z.t ORDER BY i.priority, i.vesting_time LIMIT 1)
                    UNION ALL
                    SELECT next.priority, next.vesting_time
                      FROM firsts f
                      CROSS JOIN LATERAL (
                            SELECT i.priority, i.vesting_time FROM quick.items i
                             WHERE i.tenant = z.t AND i.priority > f.priority
                             ORDER BY i.priority, i.vesting_time LIMIT 1) next)
                SELECT min(firsts.vesting_time) AS first_vesting FROM firsts) fv
            ON z.locked),
    plan AS (
        SELECT z.tenant, z.lag, z.found,
               CASE WHEN NOT z.locked THEN 'released_busy'
                    WHEN z.first_vesting IS NOT NULL THEN 'requeued'
                    WHEN NOT z.found AND z.last_active <= now_ts - min_inactive THEN 'collected'
                    ELSE 'parked' END AS action,
               CASE WHEN NOT z.locked THEN now_ts
                    WHEN z.first_vesting IS NOT NULL THEN greatest(z.first_vesting, now_ts)
                    WHEN z.found THEN now_ts + min_inactive
                    ELSE greatest(z.last_active + min_inactive, now_ts) END AS next_vesting
          FROM zones z),
    collected AS (
        DELETE FROM quick.pointers p USING plan
         WHERE plan.action = 'collected' AND p.tenant = plan.tenant
        RETURNING p.tenant),
    settled AS (
        UPDATE quick.pointers p
           SET vesting_time = plan.next_vesting, lease_id = NULL,
               last_active_time = CASE WHEN plan.found THEN now_ts ELSE p.last_active_time END
          FROM plan
         WHERE plan.action <> 'collected' AND p.tenant = plan.tenant
        RETURNING p.tenant)
    SELECT 'pointer'::text, plan.tenant, plan.action, plan.lag, NULL::bigint, NULL::text,
           NULL::integer, NULL::uuid, NULL::integer, NULL::jsonb, NULL::timestamptz, NULL::text,
           NULL::text, NULL::interval, NULL::interval
      FROM plan;
END
$$;

INSERT INTO quick.schema_migrations (version, name) VALUES (4, 'indexed_zone_probes');

COMMIT;
