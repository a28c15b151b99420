-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Batch enqueue: atomic (one statement). items is a JSON array of objects with the keys tenant,
-- job_type, payload (default {}), vesting_delay (an interval string, default '0'), priority
-- (default 0) and client_item_id (optional). Returns one row per input element, in input order.
CREATE OR REPLACE FUNCTION quick.enqueue_batch(items jsonb)
RETURNS TABLE (ordinal integer, item_id bigint, duplicate boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    limits        quick.limits := quick.current_limits();
    now_ts        timestamptz := statement_timestamp();
    element       jsonb;
    position      integer;
    unknown_key   text;
    all_valid     boolean;
    v_tenant      text[] := '{}';
    v_job_type    text[] := '{}';
    v_payload     jsonb[] := '{}';
    v_vesting     timestamptz[] := '{}';
    v_priority    integer[] := '{}';
    v_client_id   text[] := '{}';
    delay         interval;
    prio          integer;
    pending       text[];
    pending_first timestamptz[];
    pending_prio  integer[];
    new_ids       bigint[];
    was_inserted  boolean[];
    locked        text[];
    created       text[];
    is_rc         boolean := current_setting('transaction_isolation') = 'read committed';
    fence_checked boolean := false;
BEGIN
    IF items IS NULL OR jsonb_typeof(items) <> 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'quick.enqueue_batch: items must be a JSON array of item objects';
    END IF;

    -- Fast path: parse and validate every element in one statement, with exactly the checks of
    -- the per-element loop below (object, known keys, quick.check_new_item) and the same casts.
    -- Only if some element fails (or a cast raises) does the loop run, from scratch, to raise the
    -- first error with its exact message. The exception block is one read-only subtransaction
    -- per batch (no xid), instead of one per element plus a plpgsql call per element.
    BEGIN
        SELECT count(*)::integer,
               -- The delay judged by the time it gives too (quick.check_interval), here on f.delay,
               -- cast once, and only when the rest of the element is valid (its delay compared
               -- as an interval too: no overflow).
               coalesce(bool_and(f.valid
                                 AND now_ts + f.delay >= now_ts
                                 AND (now_ts + f.delay <= now_ts + limits.max_vesting_delay
                                      OR (now_ts + f.delay) - now_ts <= limits.max_vesting_delay)), true),
               array_agg(f.t), array_agg(f.jt), array_agg(f.pl), array_agg(now_ts + f.delay),
               array_agg(f.prio), array_agg(f.cid)
          INTO position, all_valid, v_tenant, v_job_type, v_payload, v_vesting, v_priority, v_client_id
          -- The aggregates read the rows in the sorted subquery's order (one sort, not eight).
          FROM (SELECT e.t, e.jt, e.pl, e.cid, e.delay, e.prio,
                       coalesce(CASE WHEN jsonb_typeof(e.element) <> 'object' THEN false
                                     WHEN e.element - '{tenant,job_type,payload,vesting_delay,priority,client_item_id}'::text[]
                                          <> '{}'::jsonb THEN false
                                     ELSE length(e.t) BETWEEN 1 AND 200
                                          AND length(e.jt) BETWEEN 1 AND 100
                                          AND octet_length(e.pl::text) <= limits.max_payload_bytes
                                          AND e.delay BETWEEN interval '0' AND limits.max_vesting_delay
                                          AND (e.cid IS NULL OR length(e.cid) BETWEEN 1 AND 200)
                                END, false) AS valid
                  FROM (SELECT a.ord, a.element,
                               a.element->>'tenant' AS t, a.element->>'job_type' AS jt,
                               coalesce(a.element->'payload', '{}'::jsonb) AS pl,
                               a.element->>'client_item_id' AS cid,
                               coalesce((a.element->>'vesting_delay')::interval, interval '0') AS delay,
                               coalesce((a.element->>'priority')::integer, 0) AS prio
                          FROM jsonb_array_elements(items) WITH ORDINALITY AS a(element, ord)) e
                 ORDER BY e.ord) f;
    EXCEPTION WHEN OTHERS THEN
        all_valid := false;
    END;

    IF NOT all_valid THEN
        v_tenant := '{}'; v_job_type := '{}'; v_payload := '{}'; v_vesting := '{}';
        v_priority := '{}'; v_client_id := '{}';
        position := 0;
        FOR element IN SELECT value FROM jsonb_array_elements(items) LOOP
            position := position + 1;
            IF jsonb_typeof(element) <> 'object' THEN
                RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                    MESSAGE = format('quick.enqueue_batch: item %s must be a JSON object', position);
            END IF;
            SELECT k INTO unknown_key FROM jsonb_object_keys(element) k
             WHERE k NOT IN ('tenant', 'job_type', 'payload', 'vesting_delay', 'priority', 'client_item_id')
             LIMIT 1;
            IF unknown_key IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                    MESSAGE = format('quick.enqueue_batch: item %s has unknown key "%s"', position, unknown_key);
            END IF;
            BEGIN
                delay := coalesce((element->>'vesting_delay')::interval, interval '0');
                prio := coalesce((element->>'priority')::integer, 0);
            EXCEPTION WHEN invalid_datetime_format OR invalid_text_representation
                        OR numeric_value_out_of_range OR datetime_field_overflow
                        OR interval_field_overflow THEN
                RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                    MESSAGE = format('quick.enqueue_batch: item %s has a malformed vesting_delay or priority: %s',
                                     position, SQLERRM);
            END;
            PERFORM quick.check_new_item(element->>'tenant', element->>'job_type',
                                         coalesce(element->'payload', '{}'::jsonb), delay,
                                         element->>'client_item_id', limits,
                                         format('quick.enqueue_batch item %s', position));
            v_tenant    := v_tenant    || (element->>'tenant');
            v_job_type  := v_job_type  || (element->>'job_type');
            v_payload   := v_payload   || coalesce(element->'payload', '{}'::jsonb);
            v_vesting   := v_vesting   || (now_ts + delay);
            v_priority  := v_priority  || prio;
            v_client_id := v_client_id || (element->>'client_item_id');
        END LOOP;
    END IF;
    IF position = 0 THEN
        RETURN;
    END IF;
    PERFORM quick.check_tenant_login(v_tenant, 'quick.enqueue_batch');

    -- Lock or create every tenant's pointer, in tenant order so that two batches creating the same
    -- new pointers cannot deadlock on the pointer slots' unique index. pending lists the tenants still to lock,
    -- sorted, with pending_first the earliest vesting time of each one's new items. Each pointer
    -- is locked through its own index lookup (a LATERAL subquery with a locking clause is never
    -- flattened, so the plan is a nested loop in pending's order): "tenant = ANY (pending)" gets a
    -- generic plan that can scan the whole pointers table, O(pointers) per batch.
    SELECT array_agg(u.t ORDER BY u.t), array_agg(u.first ORDER BY u.t), array_agg(u.prio ORDER BY u.t)
      INTO pending, pending_first, pending_prio
      FROM (SELECT x.t, min(x.v) AS first, min(x.p) AS prio
              FROM unnest(v_tenant, v_vesting, v_priority) x(t, v, p) GROUP BY x.t) u;
    LOOP
        WITH l AS (
            SELECT p.tenant, s.first, s.prio
              FROM unnest(pending, pending_first, pending_prio) s(t, first, prio)
              CROSS JOIN LATERAL (
                    SELECT p.tenant
                      FROM quick.pointers p
                     WHERE p.tenant >= s.t AND p.tenant <= s.t  -- a range, not =: see docs/protocol.md#pointer-versions
                     ORDER BY p.tenant DESC LIMIT 1  -- Newest version first: LIMIT 1 stops there.
                       FOR KEY SHARE) p),
        pulls AS (
            -- An RR/SER caller may see an older pointer version, so it always records a request;
            -- (lowest priority, earliest vesting) is at or below every item's key of the zone.
            -- READ COMMITTED callers decide after the loop (quick.record_pull_requests).
            INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority)
            SELECT l.tenant, l.first, l.prio FROM l WHERE NOT is_rc)
        SELECT array_agg(l.tenant) INTO locked FROM l;
        -- Tenants are distinct and each matches at most one pointer, so equal counts mean done.
        EXIT WHEN coalesce(cardinality(locked), 0) = cardinality(pending);
        SELECT array_agg(u.t ORDER BY u.t), array_agg(u.f ORDER BY u.t), array_agg(u.p ORDER BY u.t)
          INTO pending, pending_first, pending_prio
          FROM unnest(pending, pending_first, pending_prio) u(t, f, p) WHERE u.t <> ALL (coalesce(locked, '{}'));
        IF NOT fence_checked THEN  -- only new pointers need it (quick.check_tenants_here)
            PERFORM quick.check_tenants_here(pending, 'quick.enqueue_batch');
            fence_checked := true;
        END IF;
        WITH ins AS (
            INSERT INTO quick.pointers (tenant, vesting_time, last_active_time)
            SELECT u.t, u.f, now_ts FROM unnest(pending, pending_first) u(t, f) ORDER BY u.t  -- skipped if the slot is taken
            RETURNING tenant)
        SELECT array_agg(ins.tenant) INTO created FROM ins;
        EXIT WHEN coalesce(cardinality(created), 0) = cardinality(pending);
        SELECT array_agg(u.t ORDER BY u.t), array_agg(u.f ORDER BY u.t), array_agg(u.p ORDER BY u.t)
          INTO pending, pending_first, pending_prio
          FROM unnest(pending, pending_first, pending_prio) u(t, f, p) WHERE u.t <> ALL (coalesce(created, '{}'));
    END LOOP;

    IF is_rc THEN
        -- A new statement after the locks (docs/protocol.md#the-lock-can-return-an-older-version).
        PERFORM quick.record_pull_requests(v_tenant, v_vesting, v_priority);
    END IF;

    -- Ids are drawn up front so that each input position knows its id.
    IF cardinality(array_remove(v_client_id, NULL)) = 0 THEN
        -- No client item ids: nothing can conflict, so a plain INSERT does (ON CONFLICT would
        -- make every row a speculative insertion, with an extra WAL record each).
        RETURN QUERY
        WITH input AS (
            SELECT u.ord::integer AS ord, u.t, u.jt, u.pl, u.vt, u.pr,
                   nextval('quick.items_id_seq') AS new_id
              FROM unnest(v_tenant, v_job_type, v_payload, v_vesting, v_priority)
                   WITH ORDINALITY AS u(t, jt, pl, vt, pr, ord)),
        inserted AS (
            INSERT INTO quick.items (id, tenant, job_type, priority, vesting_time, zone_time, payload)
            SELECT new_id, t, jt, pr, vt, vt, pl FROM input ORDER BY ord)
        SELECT input.ord, input.new_id, false FROM input ORDER BY input.ord;
        RETURN;
    END IF;

    -- Items whose client id already exists are not inserted and report the existing item's id.
    -- That lookup is a second statement: under READ COMMITTED its fresh snapshot sees an item
    -- that a concurrent transaction committed while our INSERT waited for it (the INSERT's own
    -- snapshot cannot), and our own earlier rows, for duplicates within the batch.
    WITH input AS (
        SELECT u.ord, u.t, u.jt, u.pl, u.vt, u.pr, u.cid, nextval('quick.items_id_seq') AS new_id
          FROM unnest(v_tenant, v_job_type, v_payload, v_vesting, v_priority, v_client_id)
               WITH ORDINALITY AS u(t, jt, pl, vt, pr, cid, ord)),
    inserted AS (
        INSERT INTO quick.items (id, tenant, job_type, priority, vesting_time, zone_time, payload, client_item_id)
        SELECT new_id, t, jt, pr, vt, vt, pl, cid FROM input ORDER BY ord
        ON CONFLICT (tenant, client_item_id) WHERE client_item_id IS NOT NULL DO NOTHING
        RETURNING id)
    SELECT array_agg(input.new_id ORDER BY input.ord), array_agg(ins.id IS NOT NULL ORDER BY input.ord)
      INTO new_ids, was_inserted
      FROM input LEFT JOIN inserted ins ON ins.id = input.new_id;

    RETURN QUERY
    SELECT u.ord::integer,
           CASE WHEN u.ins THEN u.id
                ELSE (SELECT i.id FROM quick.items i WHERE i.tenant = u.t AND i.client_item_id = u.cid) END,
           NOT u.ins
      FROM unnest(new_ids, was_inserted, v_tenant, v_client_id) WITH ORDINALITY AS u(id, ins, t, cid, ord)
     ORDER BY u.ord;
END
$$;
REVOKE ALL ON FUNCTION quick.enqueue_batch(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.enqueue_batch(jsonb) TO quick_producer, quick_admin;
