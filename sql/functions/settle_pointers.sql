-- Settle leased pointers after a visit (Algorithm 2, lines 7-12), for many zones at once:
--   * zone has items     -> requeue: vesting_time = the zone's earliest vesting time (never before
--                           now), lease released; last_active_time = now if the visit found items;
--   * zone empty, idle for min_inactive -> delete the pointer (garbage collection);
--   * zone empty, not idle long enough  -> park it until it will be, lease released.
-- Must run in READ COMMITTED, as three statements: lock the pointers FOR UPDATE SKIP LOCKED (this
-- conflicts only with an enqueuer's FOR KEY SHARE), then read the zones in a NEW statement, whose
-- fresh snapshot sees every enqueue that committed before the lock, then write. A single-statement
-- form or a REPEATABLE READ/SERIALIZABLE transaction would miss those enqueues and orphan zones
-- (docs/protocol.md). Pointers an enqueuer holds right now are just released to vest now.
-- Returns what happened to each pointer: requeued, parked, collected, released_busy; skipped
-- when another session held it at that instant (it vests when our lease runs out); lease_lost
-- when the lease id no longer matched. Never waits on a row lock.
CREATE OR REPLACE FUNCTION quick.settle_pointers(tenants text[], lease_ids uuid[], items_found boolean[],
                                                 min_inactive interval)
RETURNS TABLE (tenant text, action text, next_vesting_time timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    locked_tenants  text[];
    locked_active   timestamptz[];
    locked_first    timestamptz[];
    busy_tenants    text[];
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_transaction_state',
            MESSAGE = 'quick.settle_pointers must run in READ COMMITTED: under a snapshot isolation '
                      'level it cannot see concurrent enqueues and would orphan queue zones';
    END IF;
    PERFORM quick.check_not_null(tenants IS NULL, 'tenants', 'quick.settle_pointers');
    PERFORM quick.check_not_null(lease_ids IS NULL, 'lease_ids', 'quick.settle_pointers');
    PERFORM quick.check_not_null(items_found IS NULL, 'items_found', 'quick.settle_pointers');
    PERFORM quick.check_argument(
        cardinality(tenants) = cardinality(lease_ids) AND cardinality(tenants) = cardinality(items_found),
        'quick.settle_pointers: tenants, lease_ids and items_found must have the same length');
    PERFORM quick.check_interval(min_inactive, 'min_inactive', 'quick.settle_pointers', true,
                                 (SELECT l.max_min_inactive FROM quick.limits l), 'max_min_inactive');

    -- Statement 1: lock the pointers whose lease we still hold. SKIP LOCKED skips pointers that
    -- an enqueuer holds FOR KEY SHARE right now; those are released below without a zone check.
    SELECT coalesce(array_agg(l.tenant ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.last_active_time ORDER BY l.tenant), '{}')
      INTO locked_tenants, locked_active
      FROM (SELECT p.tenant, p.last_active_time
              FROM quick.pointers p
              JOIN unnest(tenants, lease_ids) u(t, l) ON p.tenant = u.t AND p.lease_id = u.l
             ORDER BY p.tenant
               FOR UPDATE OF p SKIP LOCKED) l;

    -- The rest of our pointers: those only enqueuers hold (FOR NO KEY UPDATE is compatible with
    -- their KEY SHARE) can be released; one that another session locks right now (a pull being
    -- applied, a lease attempt) is left alone, and vests when our short pointer lease runs out.
    -- Locking first means the writes below never wait.
    SELECT coalesce(array_agg(b.tenant ORDER BY b.tenant), '{}')
      INTO busy_tenants
      FROM (SELECT p.tenant
              FROM quick.pointers p
              JOIN unnest(tenants, lease_ids) u(t, l) ON p.tenant = u.t AND p.lease_id = u.l
             WHERE p.tenant <> ALL (locked_tenants)
             ORDER BY p.tenant
               FOR NO KEY UPDATE OF p SKIP LOCKED) b;

    -- Statement 2, with a new snapshot: the earliest vesting time in each locked zone (NULL when
    -- the zone is empty). Every enqueue into these zones has committed or will wait for us.
    SELECT coalesce(array_agg(quick.zone_first_vesting(z.t) ORDER BY z.ord), '{}')
      INTO locked_first
      FROM unnest(locked_tenants) WITH ORDINALITY z(t, ord);

    -- Statement 3: decide and write. The DELETE and the UPDATE act on disjoint rows by construction.
    RETURN QUERY
    WITH input AS (
        SELECT DISTINCT ON (u.t) u.t AS tenant, u.l AS lease_id, coalesce(u.f, false) AS found
          FROM unnest(tenants, lease_ids, items_found) WITH ORDINALITY u(t, l, f, ord)
         ORDER BY u.t, u.ord),
    locked AS (
        SELECT k.t AS tenant, k.a AS last_active, k.v AS first_vesting
          FROM unnest(locked_tenants, locked_active, locked_first) k(t, a, v)),
    plan AS (
        SELECT i.tenant, i.lease_id, i.found,
               CASE WHEN l.tenant IS NULL AND i.tenant = ANY (busy_tenants) THEN 'released_busy'
                    WHEN l.tenant IS NULL THEN 'untouched'
                    WHEN l.first_vesting IS NOT NULL THEN 'requeued'
                    WHEN NOT i.found AND l.last_active <= now_ts - min_inactive THEN 'collected'
                    ELSE 'parked' END AS action,
               CASE WHEN l.tenant IS NULL THEN now_ts
                    WHEN l.first_vesting IS NOT NULL THEN greatest(l.first_vesting, now_ts)
                    WHEN i.found THEN now_ts + min_inactive
                    ELSE greatest(l.last_active + min_inactive, now_ts) END AS next_vesting
          FROM input i LEFT JOIN locked l ON l.tenant = i.tenant),
    collected AS (
        DELETE FROM quick.pointers p USING plan
         WHERE plan.action = 'collected' AND p.tenant = plan.tenant AND p.lease_id = plan.lease_id
        RETURNING p.tenant),
    settled AS (
        UPDATE quick.pointers p
           -- A pointer an enqueuer holds, of a zone the visit found nothing in, backs off as in
           -- quick.visit_zones (quick.busy_settle_delay).
           SET vesting_time = CASE WHEN plan.action = 'released_busy' AND NOT plan.found
                                   THEN now_ts + quick.busy_settle_delay(p.busy_settles)
                                   ELSE plan.next_vesting END,
               busy_settles = CASE WHEN plan.action = 'released_busy' AND NOT plan.found
                                   THEN least(p.busy_settles + 1, 100) ELSE 0 END,
               lease_id = NULL,
               last_active_time = CASE WHEN plan.found THEN now_ts ELSE p.last_active_time END
          FROM plan
         WHERE plan.action NOT IN ('collected', 'untouched')
           AND p.tenant = plan.tenant AND p.lease_id = plan.lease_id
        RETURNING p.tenant, p.vesting_time)
    SELECT plan.tenant,
           CASE WHEN c.tenant IS NOT NULL THEN 'collected'
                WHEN s.tenant IS NOT NULL THEN plan.action
                WHEN plan.action = 'untouched'
                     AND EXISTS (SELECT 1 FROM quick.pointers p
                                  WHERE p.tenant = plan.tenant AND p.lease_id = plan.lease_id) THEN 'skipped'
                ELSE 'lease_lost' END,
           s.vesting_time
      FROM plan
      LEFT JOIN collected c ON c.tenant = plan.tenant
      LEFT JOIN settled s ON s.tenant = plan.tenant;
END
$$;
REVOKE ALL ON FUNCTION quick.settle_pointers(text[],uuid[],boolean[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.settle_pointers(text[],uuid[],boolean[],interval) TO quick_consumer, quick_admin;
