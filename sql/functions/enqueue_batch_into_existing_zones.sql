-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's batch fast path: quick.enqueue_batch's protocol for the common case, in one
-- statement read straight from the same JSON array (items, as enqueue_batch_in builds it): FOR
-- KEY SHARE on each distinct tenant's pointer (in tenant order, each through its own index
-- lookup), then the items; a second statement records the pull requests quick.enqueue_batch
-- would record. Items and requests
-- are written only when every tenant's pointer was locked and every item is one quick.enqueue_batch
-- would accept without a client item id: the InitPlan over `locked` runs, and so takes every
-- lock, before either insert reads a row. Otherwise no row comes back and nothing but locks was
-- taken: the caller then calls quick.enqueue_batch, which creates the pointers, checks client
-- item ids or raises the error.
--
-- pull_in_transaction (EnqueueOptions::pull_in_transaction): a READ COMMITTED caller moves a
-- parked pointer itself instead of recording a pull request, when it can lock the pointer FOR NO
-- KEY UPDATE without waiting (SKIP LOCKED: a consumer holds it right now, or another enqueuer
-- pulled it first); it then holds that lock until it commits. Pointers it cannot lock get a
-- request as usual.
--
-- Returns the new ids, one per input item. The items are inserted in input order and each takes
-- its id from the identity sequence as it is inserted, so the ids ascend in input order: the
-- producer sorts them and need not be told which id is whose. (Drawing the ids in `input` and
-- joining them back by position cost about 1.5 us per item, a tenth of the statement.) Absent
-- keys take quick.enqueue_batch's defaults; the producer leaves out default values, whose parsing
-- (an interval per item) cost about 1 us per item. Runs inside the caller's transaction and never
-- commits.
-- enable_sort = off: the newest-version lookups below must read the pointer index backwards. An
-- automatic ANALYZE under a held snapshot (one live pointer among thousands of dead versions) can
-- make pointers_vesting look cheaper, scanned whole for the tenant and sorted: one minute of
-- every statement walking every version (docs/benchmarks.md#ten-minutes-held-on-the-final-build-2026-11-27).
-- Any other sort this function needs has no alternative, and is kept.
CREATE OR REPLACE FUNCTION quick.enqueue_batch_into_existing_zones(items jsonb,
                                                                   pull_in_transaction boolean DEFAULT false)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    limits      quick.limits := quick.current_limits();
    new_ids     bigint[];
    decide_here boolean;
    w_tenants   text[];
    w_first     timestamptz[];
    w_priority  integer[];
BEGIN
    IF jsonb_typeof(items) IS DISTINCT FROM 'array' THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM quick.tenant_logins) THEN
        PERFORM quick.check_tenant_login(ARRAY(SELECT e->>'tenant' FROM jsonb_array_elements(items) e),
                                         'quick.enqueue_batch_into_existing_zones');
    END IF;
    WITH input AS MATERIALIZED (
        SELECT a.ord, a.e->>'tenant' AS tenant, a.e->>'job_type' AS job_type,
               coalesce(a.e->'payload', '{}'::jsonb) AS payload,
               coalesce((a.e->>'vesting_delay')::interval, interval '0') AS delay,
               coalesce((a.e->>'priority')::integer, 0) AS priority,
               -- What quick.enqueue_batch checks, but for the payload's size (below, once); client
               -- item ids are left to that function. Other keys are not looked at here (finding
               -- them costs a copy of every item): a caller of this function sends the five keys
               -- above only, as the C++ producer does.
               coalesce(jsonb_typeof(a.e) = 'object' AND NOT a.e ? 'client_item_id'
                        AND length(a.e->>'tenant') BETWEEN 1 AND 200
                        AND length(a.e->>'job_type') BETWEEN 1 AND 100, false) AS valid
          FROM jsonb_array_elements(items) WITH ORDINALITY AS a(e, ord)),
    wanted AS MATERIALIZED (
        -- The earliest time an item of the tenant gives (not the time of the smallest delay: the
        -- two differ for delays mixing signs, see quick.check_interval). A delay out of the
        -- limit's range makes the batch invalid (complete), but must not make the time
        -- computation overflow first: it counts as zero here.
        SELECT i.tenant,
               min(statement_timestamp() + CASE WHEN i.delay BETWEEN interval '0' AND limits.max_vesting_delay
                                                THEN i.delay ELSE interval '0' END) AS first,
               min(i.priority) AS priority
          FROM input i GROUP BY i.tenant),
    locked AS MATERIALIZED (
        SELECT p.tenant, p.vesting_time, p.lease_id, w.first, w.priority
          FROM (SELECT * FROM wanted ORDER BY tenant) w
          CROSS JOIN LATERAL (
                SELECT p.tenant, p.vesting_time, p.lease_id
                  FROM quick.pointers p
                 WHERE p.tenant >= w.tenant AND p.tenant <= w.tenant  -- a range, not =: see docs/protocol.md#pointer-versions
                 ORDER BY p.tenant DESC LIMIT 1  -- Newest version first: LIMIT 1 stops there.
                   FOR KEY SHARE) p),
    -- One row, computed once: the limits are applied once per statement, not once per item.
    complete AS MATERIALIZED (
        SELECT (SELECT count(*) FROM locked) = (SELECT count(*) FROM wanted)
               AND (SELECT bool_and(i.valid
                                    -- quick.check_interval's comparisons: as intervals, then (CASE:
                                    -- only then, no overflow) by the time the delay gives.
                                    AND CASE WHEN i.delay BETWEEN interval '0' AND limits.max_vesting_delay
                                             THEN statement_timestamp() + i.delay >= statement_timestamp()
                                                  AND (statement_timestamp() + i.delay
                                                           <= statement_timestamp() + limits.max_vesting_delay
                                                       OR (statement_timestamp() + i.delay) - statement_timestamp()
                                                           <= limits.max_vesting_delay)
                                             ELSE false END)
                           AND max(octet_length(i.payload::text)) <= limits.max_payload_bytes
                      FROM input i) AS ok,
               current_setting('transaction_isolation') <> 'read committed' AS always_pull),
    -- Pulled in the caller's transaction: the parked, unleased pointers locked without waiting, in
    -- tenant order. (Which pointers to try is judged on what the KEY SHARE lock returned, which can
    -- be older; a version replaced since this statement's snapshot is not claimed,
    -- docs/protocol.md#pointer-versions: one missed here gets a request below.)
    -- Each pointer's newest version is found without a lock, then locked by its ctid
    -- (docs/protocol.md#pointer-versions).
    claimed AS MATERIALIZED (
        SELECT m.tenant, m.first, x.version
          FROM (SELECT l.tenant, l.first FROM locked l, complete c
                 WHERE pull_in_transaction AND c.ok AND NOT c.always_pull AND l.vesting_time > l.first
                   AND l.lease_id IS NULL
                 ORDER BY l.tenant) m
         CROSS JOIN LATERAL (
               SELECT n.ctid FROM quick.pointers n
                WHERE n.tenant >= m.tenant AND n.tenant <= m.tenant  -- a range, not =: newest version first
                ORDER BY n.tenant DESC LIMIT 1) newest
         CROSS JOIN LATERAL (
               SELECT p.ctid AS version FROM quick.pointers p
                WHERE p.ctid = newest.ctid AND p.vesting_time > m.first AND p.lease_id IS NULL
                  FOR NO KEY UPDATE SKIP LOCKED) x),
    -- The zones vest at commit, unannounced otherwise: RETURNING notifies (a data-modifying CTE
    -- runs to completion, RETURNING included, though nothing reads it). Reached by the claimed
    -- versions (a TID scan): a plan that joined the other way round read every pointer and, while
    -- a snapshot holds vacuum back, every version of each, in every call, claimed or not. (On a
    -- PostgreSQL minor whose lock returns a version committed after this statement's snapshot,
    -- this update does not see it and moves nothing: quick.record_pull_requests below then
    -- records a request.)
    moved AS (
        UPDATE quick.pointers p SET vesting_time = c.first
          FROM claimed c
         WHERE p.ctid = ANY (ARRAY(SELECT c2.version FROM claimed c2))
           AND p.ctid = c.version AND p.vesting_time > c.first
        RETURNING quick.notify_consumers()),
    -- An RR/SER caller may see an older pointer version, so it always records a request;
    -- (lowest priority, earliest vesting) is at or below every item's key.
    pulls AS (
        INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority)
        SELECT l.tenant, l.first, l.priority FROM locked l, complete c
         WHERE c.ok AND c.always_pull),
    inserted AS (
        INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, payload)
        SELECT i.tenant, i.job_type, i.priority, statement_timestamp() + i.delay, statement_timestamp() + i.delay,
               i.payload
          FROM input i, complete c
         WHERE c.ok
         ORDER BY i.ord
        RETURNING id)
    SELECT (SELECT array_agg(n.id ORDER BY n.id) FROM inserted n), c.ok AND NOT c.always_pull,
           array_agg(w.tenant), array_agg(w.first), array_agg(w.priority)
      INTO new_ids, decide_here, w_tenants, w_first, w_priority
      FROM complete c, wanted w
     GROUP BY c.ok, c.always_pull;

    IF decide_here THEN
        -- A READ COMMITTED caller's pull requests, in a new statement after the locks
        -- (docs/protocol.md#the-lock-can-return-an-older-version). A pointer pulled in above
        -- vests with the items.
        PERFORM quick.record_pull_requests(w_tenants, w_first, w_priority);
    END IF;
    RETURN QUERY SELECT unnest(new_ids);
END
$$;
REVOKE ALL ON FUNCTION quick.enqueue_batch_into_existing_zones(jsonb,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.enqueue_batch_into_existing_zones(jsonb,boolean) TO quick_producer, quick_admin;
