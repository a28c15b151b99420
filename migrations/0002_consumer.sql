-- quick-pg schema version 2: what the consumer (Scanner, Managers, Workers) needs.
--   * quick.dead_items: items that failed permanently, kept for inspection and re-enqueue;
--   * quick.consumer_roles: leases on roles such as the in-order Scanner of this database;
--   * batch functions: Postgres' unit of cost is the statement and the commit, so the consumer
--     visits (leases, dequeues, settles), extends and acknowledges many zones and items per call.
--
-- Apply with: psql -v ON_ERROR_STOP=1 -f migrations/0002_consumer.sql (after 0001), or quick migrate.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 1) THEN
        RAISE EXCEPTION 'quick migration 0002 needs migration 0001 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 2) THEN
        RAISE EXCEPTION 'quick migration 0002 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- Items that failed permanently (a handler said so, or the retry policy gave up). Re-enqueue one
-- with SELECT quick.retry_dead_item(id).
CREATE TABLE quick.dead_items (
    id             bigint      PRIMARY KEY,       -- the id it had in quick.items
    tenant         text        NOT NULL,
    job_type       text        NOT NULL,
    priority       integer     NOT NULL,
    error_count    integer     NOT NULL,
    payload        jsonb       NOT NULL,
    enqueued_at    timestamptz NOT NULL,
    client_item_id text,
    last_error     text,
    died_at        timestamptz NOT NULL DEFAULT statement_timestamp(),
    reason         text        NOT NULL
);
CREATE INDEX dead_items_tenant ON quick.dead_items (tenant, died_at);
CREATE INDEX dead_items_job_type ON quick.dead_items (job_type, died_at);

-- Leases on consumer roles, e.g. 'in_order_scanner': the one consumer that processes this
-- database's pointers in vesting order (paper section 6: "we occasionally select one Scanner to
-- process pointers in-order"). The holder renews; when it dies, the lease runs out and another
-- consumer claims it.
CREATE TABLE quick.consumer_roles (
    role        text        PRIMARY KEY,
    holder      text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    acquired_at timestamptz NOT NULL
);

-- Claim or renew `role` for `holder`. Returns the holder after the call and its expiry: the
-- caller has the role iff the returned holder is itself.
CREATE FUNCTION quick.claim_role(role text, holder text, lease_duration interval)
RETURNS TABLE (current_holder text, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
BEGIN
    PERFORM quick.check_positive_interval(lease_duration, 'lease_duration', 'quick.claim_role');
    PERFORM quick.check_argument(length(claim_role.holder) > 0, 'quick.claim_role: holder must not be empty');
    RETURN QUERY
    INSERT INTO quick.consumer_roles AS r (role, holder, expires_at, acquired_at)
    VALUES (claim_role.role, claim_role.holder, now_ts + lease_duration, now_ts)
    ON CONFLICT (role) DO UPDATE
       SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
           acquired_at = CASE WHEN r.holder = EXCLUDED.holder THEN r.acquired_at ELSE EXCLUDED.acquired_at END
     WHERE r.holder = EXCLUDED.holder OR r.expires_at <= now_ts
    RETURNING r.holder, r.expires_at;
    IF NOT FOUND THEN
        RETURN QUERY SELECT r.holder, r.expires_at FROM quick.consumer_roles r WHERE r.role = claim_role.role;
    END IF;
END
$$;

-- Give a role up (on a clean stop) so another consumer can claim it at once.
CREATE FUNCTION quick.release_role(role text, holder text)
RETURNS boolean
LANGUAGE sql VOLATILE AS $$
    DELETE FROM quick.consumer_roles r WHERE r.role = release_role.role AND r.holder = release_role.holder
    RETURNING true
$$;

-- Algorithm 2 for a batch of zones: one call, one transaction, one round trip.
--
-- On FoundationDB the paper's Manager leases a pointer, dequeues and settles it in separate
-- transactions, and the pointer lease (a vesting-time bump) keeps the zone its own in between.
-- On Postgres a commit is the unit of cost, so the whole visit is one transaction and the row
-- lock is the lease: other consumers skip the zone while it is visited, and a consumer that dies
-- mid-visit changes nothing (the transaction rolls back, the pointer is still vested).
--
--   1. lock the named zones' pointers that are vested. FOR NO KEY UPDATE SKIP LOCKED: never FOR
--      UPDATE, which would skip pointers that enqueuers hold FOR KEY SHARE and starve busy tenants;
--   2. dequeue up to dequeue_max vested items from each zone (item leases), leaving out job types
--      the consumer is throttling;
--   3. a zone that still has vested items has more work: its pointer vests again now;
--   4. every other zone is settled with the protocol of quick.settle_pointers (docs/protocol.md):
--      lock FOR UPDATE SKIP LOCKED, which conflicts only with an enqueue in flight; in a NEW
--      statement read the zone and requeue its pointer to the zone's earliest vesting time, park
--      it, or delete it when the zone has been empty for min_inactive. A zone an enqueuer holds
--      right now is released to vest now.
-- Returns one row per dequeued item (kind 'item'), one per zone visited (kind 'pointer', with
-- what happened: requeued, parked, collected, released_busy; and pointer_lag, how long the
-- pointer had been vested), and for each tenant that was not visited one row of kind 'conflict': 'locked' (another consumer was visiting it), 'not_vested' (visited and requeued
-- by someone else since it was peeked) or 'gone'. ready_lag: how long each item had been vested;
-- age: since its enqueue (database clock).
CREATE FUNCTION quick.visit_zones(tenants text[], dequeue_max integer, item_lease_duration interval,
                                  min_inactive interval, excluded_job_types text[] DEFAULT '{}')
RETURNS TABLE (kind text, tenant text, action text, pointer_lag interval,
               item_id bigint, job_type text, priority integer, item_lease_id uuid,
               error_count integer, payload jsonb, enqueued_at timestamptz, client_item_id text,
               last_error text, ready_lag interval, age interval)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    zone_tenants    text[];
    zone_active     timestamptz[];
    zone_lag        interval[];
    found_zones     text[];
    busy_zones      text[] := '{}';
    settle_tenants  text[];
    locked_tenants  text[];
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

    -- 1: which zones, and which of them have vested items to take: the zones active on this
    -- visit (Algorithm 2, line 3; the probe reads the front of each zone's index).
    SELECT coalesce(array_agg(l.tenant ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.last_active_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(now_ts - l.vesting_time ORDER BY l.tenant), '{}'),
           coalesce(array_agg(l.tenant ORDER BY l.tenant) FILTER (WHERE l.active), '{}')
      INTO zone_tenants, zone_active, zone_lag, found_zones
      FROM (SELECT p.tenant, p.last_active_time, p.vesting_time,
                   EXISTS (SELECT 1 FROM quick.items i WHERE i.tenant = p.tenant AND i.vesting_time <= now_ts
                              AND i.job_type <> ALL (coalesce(excluded_job_types, '{}'))) AS active
              FROM quick.pointers p
             WHERE p.tenant = ANY (tenants) AND p.vesting_time <= now_ts
             ORDER BY p.tenant
               FOR NO KEY UPDATE OF p SKIP LOCKED) l;
    -- Why the others were not visited (cheap: no locks; only the losers are looked at).
    IF cardinality(zone_tenants) < cardinality(tenants) THEN
        RETURN QUERY
        SELECT 'conflict'::text, t.tenant,
               CASE WHEN p.tenant IS NULL THEN 'gone'
                    WHEN p.vesting_time <= now_ts THEN 'locked'
                    ELSE 'not_vested' END,
               NULL::interval, NULL::bigint, NULL::text, NULL::integer, NULL::uuid, NULL::integer,
               NULL::jsonb, NULL::timestamptz, NULL::text, NULL::text, NULL::interval, NULL::interval
          FROM unnest(tenants) t(tenant)
          LEFT JOIN quick.pointers p ON p.tenant = t.tenant
         WHERE t.tenant <> ALL (zone_tenants);
    END IF;
    IF cardinality(zone_tenants) = 0 THEN
        RETURN;
    END IF;

    -- 2: dequeue from the active zones, streaming the leased items out.
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
          FROM chosen WHERE i.id = chosen.id
        RETURNING 'item'::text, i.tenant, NULL::text, NULL::interval, i.id, i.job_type, i.priority, i.lease_id,
                  i.error_count, i.payload, i.enqueued_at, i.client_item_id, i.last_error,
                  now_ts - chosen.ready_at, now_ts - i.enqueued_at;
    END IF;

    -- 3: zones that still have vested items after the dequeue (this reads our own writes: the
    -- items just leased no longer vest) have more work: requeue them now, Algorithm 2's requeue
    -- to an earliest vesting time that is already past. No FOR UPDATE is needed for that: the
    -- pointer stays vested, so no enqueue can be delayed by it, and a plain no-key update does
    -- not disturb REPEATABLE READ / SERIALIZABLE enqueuers the way a FOR UPDATE lock does.
    SELECT coalesce(array_agg(z.tenant), '{}')
      INTO busy_zones
      FROM unnest(found_zones) z(tenant)
     WHERE EXISTS (SELECT 1 FROM quick.items i WHERE i.tenant = z.tenant AND i.vesting_time <= now_ts);
    IF cardinality(busy_zones) > 0 THEN
        UPDATE quick.pointers p SET vesting_time = now_ts, last_active_time = now_ts, lease_id = NULL
         WHERE p.tenant = ANY (busy_zones);
        RETURN QUERY
        SELECT 'pointer'::text, z.t, 'requeued'::text, z.lag, NULL::bigint, NULL::text, NULL::integer,
               NULL::uuid, NULL::integer, NULL::jsonb, NULL::timestamptz, NULL::text, NULL::text,
               NULL::interval, NULL::interval
          FROM unnest(zone_tenants, zone_lag) z(t, lag)
         WHERE z.t = ANY (busy_zones);
    END IF;
    settle_tenants := ARRAY(SELECT t FROM unnest(zone_tenants) t WHERE t <> ALL (busy_zones) ORDER BY t);
    IF cardinality(settle_tenants) = 0 THEN
        RETURN;
    END IF;

    -- 4: settle the other zones with the GC protocol (docs/protocol.md): their pointers may move
    -- into the future or go. 4a locks FOR UPDATE SKIP LOCKED, which conflicts only with an
    -- enqueue in flight; 4b, a NEW statement whose snapshot is taken after that lock and so sees
    -- every enqueue that committed before it, reads each zone's earliest vesting time (its own
    -- leases included: they are this transaction's writes) and writes the pointer. Unlike a lone
    -- DELETE ... NOT EXISTS, which waits for its lock inside its own statement and keeps its older
    -- snapshot, 4b never waits: the lock is already ours.
    SELECT coalesce(array_agg(l.tenant ORDER BY l.tenant), '{}')
      INTO locked_tenants
      FROM (SELECT p.tenant FROM quick.pointers p
             WHERE p.tenant = ANY (settle_tenants)
             ORDER BY p.tenant
               FOR UPDATE SKIP LOCKED) l;

    RETURN QUERY
    WITH zones AS (
        SELECT z.t AS tenant, z.active AS last_active, z.lag, z.t = ANY (found_zones) AS found,
               z.t = ANY (locked_tenants) AS locked, fv.first_vesting
          FROM unnest(zone_tenants, zone_active, zone_lag) z(t, active, lag)
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
            ON z.t = ANY (locked_tenants)
         WHERE z.t = ANY (settle_tenants)),
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

-- The Scanner's one call per scan (Algorithm 1, line 6): apply the pending pull requests
-- (earlier items enqueued into parked zones, retries, releases), then peek up to max_pointers
-- vested pointers in vesting order, from the pointers_vesting index. The first row, with a NULL
-- tenant, says how many pointers the pulls moved.
CREATE FUNCTION quick.scan_pointers(max_pointers integer, max_pulls integer DEFAULT 10000)
RETURNS TABLE (tenant text, vesting_time timestamptz, pulled integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT NULL::text, NULL::timestamptz, quick.apply_pointer_pulls(max_pulls);
    RETURN QUERY SELECT p.tenant, p.vesting_time, NULL::integer FROM quick.peek_pointers(max_pointers) p;
END
$$;

-- Extend the leases of running items in one statement. Returns the items whose lease was
-- extended; any other item of the input has lost its lease (re-leased, or gone).
CREATE FUNCTION quick.extend_item_leases(item_ids bigint[], lease_ids uuid[], lease_duration interval)
RETURNS TABLE (item_id bigint, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_positive_interval(lease_duration, 'lease_duration', 'quick.extend_item_leases');
    PERFORM quick.check_argument(cardinality(item_ids) = cardinality(lease_ids),
        'quick.extend_item_leases: item_ids and lease_ids must have the same length');
    RETURN QUERY
    UPDATE quick.items i SET vesting_time = statement_timestamp() + lease_duration
      FROM unnest(item_ids, lease_ids) u(id, lease)
     WHERE i.id = u.id AND i.lease_id = u.lease
    RETURNING i.id, i.vesting_time;
END
$$;

-- Acknowledge processed items in one statement. For each item, with its lease id, one action:
--   'complete'  delete it (done);
--   'retry'     requeue: vests again after delay, error_count + failed attempts, error recorded,
--               lease released;
--   'release'   give the lease back without counting an error (vests after delay);
--   'dead'      move it to quick.dead_items with error as the reason (error_count + failed attempts);
--   'delete'    delete it without keeping it (permanent failure, policy "delete").
-- failed_attempts (default: 1 each) counts the failures being recorded, in-line retries included.
-- Every action is conditional on the lease, so acknowledging twice (after an in-doubt commit) is
-- harmless: the second time reports lease_lost or item_gone. Returns an outcome per input item.
-- Items that vest again (retry, release) may vest before their zone's pointer, which was settled
-- while they were leased: quick.request_pointer_pulls takes care of that, as enqueue does.
CREATE FUNCTION quick.ack_items(item_ids bigint[], lease_ids uuid[], actions text[],
                                delays interval[], errors text[], failed_attempts integer[] DEFAULT NULL)
RETURNS TABLE (item_id bigint, outcome quick.outcome)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    bad_action      text;
    failures        integer[] := coalesce(failed_attempts, array_fill(1, ARRAY[cardinality(item_ids)]));
    done_ids        bigint[];
    vesting_tenants text[];
    vesting_times   timestamptz[];
BEGIN
    PERFORM quick.check_argument(
        cardinality(item_ids) = cardinality(lease_ids) AND cardinality(item_ids) = cardinality(actions)
        AND cardinality(item_ids) = cardinality(delays) AND cardinality(item_ids) = cardinality(errors)
        AND cardinality(item_ids) = cardinality(failures),
        'quick.ack_items: all arrays must have the same length');
    -- The common case, every item done: one DELETE.
    IF 'complete' = ALL (actions) THEN
        RETURN QUERY
        WITH deleted AS (
            DELETE FROM quick.items i USING unnest(item_ids, lease_ids) u(id, lease)
             WHERE i.id = u.id AND i.lease_id = u.lease
            RETURNING i.id)
        SELECT u.id,
               CASE WHEN EXISTS (SELECT 1 FROM deleted d WHERE d.id = u.id) THEN 'done'::quick.outcome
                    WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = u.id) THEN 'lease_lost'::quick.outcome
                    ELSE 'item_gone'::quick.outcome END
          FROM unnest(item_ids) u(id);
        RETURN;
    END IF;

    SELECT a INTO bad_action FROM unnest(actions) a
     WHERE a IS NULL OR a NOT IN ('complete', 'retry', 'release', 'dead', 'delete') LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('quick.ack_items: unknown action %s (complete, retry, release, dead, delete)',
                             coalesce(quote_literal(bad_action), 'NULL'));
    END IF;

    WITH input AS (
        SELECT u.id, u.lease, u.action, coalesce(u.delay, interval '0') AS delay, u.error,
               greatest(coalesce(u.failures, 1), 0) AS failures
          FROM unnest(item_ids, lease_ids, actions, delays, errors, failures)
               u(id, lease, action, delay, error, failures)),
    deleted AS (
        DELETE FROM quick.items i USING input
         WHERE i.id = input.id AND i.lease_id = input.lease
           AND input.action IN ('complete', 'dead', 'delete')
        RETURNING i.*, input.action, input.error AS reason, input.failures),
    buried AS (
        INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload,
                                      enqueued_at, client_item_id, last_error, died_at, reason)
        SELECT d.id, d.tenant, d.job_type, d.priority, d.error_count + d.failures, d.payload,
               d.enqueued_at, d.client_item_id, d.last_error, now_ts, coalesce(d.reason, 'permanent failure')
          FROM deleted d WHERE d.action = 'dead'
        ON CONFLICT (id) DO NOTHING
        RETURNING id),
    updated AS (
        UPDATE quick.items i
           SET vesting_time = now_ts + input.delay, lease_id = NULL,
               error_count = CASE WHEN input.action = 'retry' THEN i.error_count + input.failures
                                  ELSE i.error_count END,
               last_error = CASE WHEN input.action = 'retry' THEN coalesce(input.error, i.last_error)
                                 ELSE i.last_error END
          FROM input
         WHERE i.id = input.id AND i.lease_id = input.lease AND input.action IN ('retry', 'release')
        RETURNING i.id, i.tenant, i.vesting_time)
    SELECT coalesce((SELECT array_agg(d.id) FROM deleted d), '{}') ||
           coalesce((SELECT array_agg(u.id) FROM updated u), '{}'),
           coalesce((SELECT array_agg(u.tenant) FROM updated u), '{}'),
           coalesce((SELECT array_agg(u.vesting_time) FROM updated u), '{}')
      INTO done_ids, vesting_tenants, vesting_times;

    IF cardinality(vesting_tenants) > 0 THEN
        PERFORM quick.request_pointer_pulls(vesting_tenants, vesting_times);
    END IF;

    RETURN QUERY
    SELECT u.id,
           CASE WHEN u.id = ANY (done_ids) THEN 'done'::quick.outcome
                WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = u.id) THEN 'lease_lost'::quick.outcome
                ELSE 'item_gone'::quick.outcome END
      FROM unnest(item_ids) u(id);
END
$$;

-- Put a dead item back in its zone (through quick.enqueue, so the zone gets its pointer), with a
-- fresh error count. Returns the new item id. Runs inside the caller's transaction.
CREATE FUNCTION quick.retry_dead_item(dead_item_id bigint, vesting_delay interval DEFAULT '0')
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    dead quick.dead_items;
    new_id bigint;
BEGIN
    DELETE FROM quick.dead_items d WHERE d.id = dead_item_id RETURNING * INTO dead;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('quick.retry_dead_item: no dead item with id %s', coalesce(dead_item_id::text, 'NULL'));
    END IF;
    SELECT e.item_id INTO new_id
      FROM quick.enqueue(dead.tenant, dead.job_type, dead.payload, vesting_delay, dead.priority,
                         dead.client_item_id) e;
    RETURN new_id;
END
$$;

INSERT INTO quick.schema_migrations (version, name) VALUES (2, 'consumer');

COMMIT;
