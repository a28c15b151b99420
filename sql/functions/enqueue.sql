-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Enqueue: runs inside the caller's transaction, at any isolation level, and never commits.
--
-- Protocol (docs/protocol.md): lock the tenant's pointer FOR KEY SHARE, which conflicts only with
-- its deletion (GC) and never with consumers' lease updates; if there is none, create it (an
-- INSERT that inserts nothing when the tenant's pointer slot is taken: pointer_slots.sql) and
-- retry the lock if another transaction won that race; then
-- insert the item. Under READ COMMITTED each statement takes a fresh snapshot, which the retry
-- relies on; under REPEATABLE READ/SERIALIZABLE the race with a pointer GC surfaces as 40001,
-- which the caller retries like any serialization failure.
--
-- If the existing pointer vests later than the new item, and no consumer holds it (or its lease
-- runs past now + quick.limits.max_pointer_lease), or the item sorts below the zone's floor, a
-- pull request is recorded; a consumer applies it after the commit. That is judged on the
-- pointer as a NEW statement reads it after the lock, not on what the lock returned: a KEY SHARE
-- lock can return a version older than a settle that raised the floor
-- (docs/protocol.md#the-lock-can-return-an-older-version). RR/SER callers may see a stale
-- pointer version, so they always record one.
CREATE OR REPLACE FUNCTION quick.enqueue(
    tenant         text,
    job_type       text,
    payload        jsonb    DEFAULT '{}',
    vesting_delay  interval DEFAULT '0',
    priority       integer  DEFAULT 0,
    client_item_id text     DEFAULT NULL)
RETURNS TABLE (item_id bigint, duplicate boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    limits            quick.limits := quick.current_limits();
    item_vesting      timestamptz;
    pointer_created   boolean := false;
    fence_checked     boolean := false;
BEGIN
    -- The checks of quick.check_new_item, inlined: calling it costs a plpgsql function call per
    -- enqueue. Only when one fails (or cannot be decided here) is it called, to raise its error.
    IF NOT coalesce(length(enqueue.tenant) BETWEEN 1 AND 200
                    AND length(enqueue.job_type) BETWEEN 1 AND 100
                    AND octet_length(enqueue.payload::text) <= limits.max_payload_bytes
                    -- quick.check_interval's comparisons: as intervals, then by the time they give.
                    AND enqueue.vesting_delay BETWEEN interval '0' AND limits.max_vesting_delay
                    AND statement_timestamp() + enqueue.vesting_delay >= statement_timestamp()
                    AND (statement_timestamp() + enqueue.vesting_delay <= statement_timestamp() + limits.max_vesting_delay
                         OR (statement_timestamp() + enqueue.vesting_delay) - statement_timestamp()
                            <= limits.max_vesting_delay)
                    AND (enqueue.client_item_id IS NULL OR length(enqueue.client_item_id) BETWEEN 1 AND 200),
                    false) THEN
        PERFORM quick.check_new_item(enqueue.tenant, enqueue.job_type, enqueue.payload,
                                     enqueue.vesting_delay, enqueue.client_item_id, limits,
                                     'quick.enqueue');
    END IF;
    IF enqueue.priority IS NULL THEN
        PERFORM quick.check_not_null(true, 'priority', 'quick.enqueue');
    END IF;
    PERFORM quick.check_tenant_login(ARRAY[enqueue.tenant], 'quick.enqueue');
    item_vesting := statement_timestamp() + enqueue.vesting_delay;

    LOOP
        PERFORM FROM quick.pointers p
         WHERE p.tenant >= enqueue.tenant AND p.tenant <= enqueue.tenant  -- a range, not =: see docs/protocol.md#pointer-versions
         ORDER BY p.tenant DESC LIMIT 1  -- Newest version first: LIMIT 1 stops there.
           FOR KEY SHARE;
        EXIT WHEN FOUND;
        IF NOT fence_checked THEN  -- only a new pointer needs it (quick.check_tenants_here)
            PERFORM quick.check_tenants_here(ARRAY[enqueue.tenant], 'quick.enqueue');
            fence_checked := true;
        END IF;
        INSERT INTO quick.pointers (tenant, vesting_time, last_active_time)
        VALUES (enqueue.tenant, item_vesting, statement_timestamp());  -- nothing if the slot is taken
        pointer_created := FOUND;
        EXIT WHEN pointer_created;
    END LOOP;

    IF enqueue.client_item_id IS NULL THEN
        INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, payload)
        VALUES (enqueue.tenant, enqueue.job_type, enqueue.priority, item_vesting, item_vesting, enqueue.payload)
        RETURNING id INTO item_id;
    ELSE
        INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, payload, client_item_id)
        VALUES (enqueue.tenant, enqueue.job_type, enqueue.priority, item_vesting, item_vesting, enqueue.payload,
                enqueue.client_item_id)
        ON CONFLICT (tenant, client_item_id) WHERE client_item_id IS NOT NULL DO NOTHING
        RETURNING id INTO item_id;
        IF item_id IS NULL THEN
            SELECT i.id INTO item_id FROM quick.items i
             WHERE i.tenant = enqueue.tenant AND i.client_item_id = enqueue.client_item_id;
            duplicate := true;
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    duplicate := false;

    IF pointer_created THEN
        NULL;  -- it vests with this item and has no floor
    ELSIF current_setting('transaction_isolation') <> 'read committed' THEN
        INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority)
        VALUES (enqueue.tenant, item_vesting, enqueue.priority);
    ELSE
        -- A new statement, so a new snapshot: it sees the newest pointer version, and the lock
        -- taken above keeps any settle from raising the floor or parking the zone after it.
        -- quick.record_pull_requests's rule for one item, inlined: a call per enqueue costs.
        INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority)
        SELECT enqueue.tenant, item_vesting, enqueue.priority
          FROM (SELECT p.vesting_time, p.lease_id, p.floor_priority, p.floor_vesting
                  FROM quick.pointers p
                 WHERE p.tenant >= enqueue.tenant AND p.tenant <= enqueue.tenant
                 ORDER BY p.tenant DESC LIMIT 1) p
         WHERE (p.vesting_time > item_vesting
                AND (p.lease_id IS NULL OR p.vesting_time > statement_timestamp() + limits.max_pointer_lease))
            OR (p.floor_priority IS NOT NULL
                AND (enqueue.priority, item_vesting) < (p.floor_priority, p.floor_vesting));
    END IF;
    RETURN NEXT;
END
$$;
REVOKE ALL ON FUNCTION quick.enqueue(text,text,jsonb,interval,integer,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.enqueue(text,text,jsonb,interval,integer,text) TO quick_producer, quick_admin;

COMMENT ON FUNCTION quick.enqueue(text, text, jsonb, interval, integer, text) IS
'Enqueue one item inside the caller''s transaction. Returns the item id, and duplicate = true when '
'client_item_id already named a queued item of this tenant (nothing is inserted then).';
