-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The C++ producer's fast path for one item: quick.enqueue's protocol for the common case, the
-- tenant's pointer existing and no client item id to check. It locks the pointer FOR KEY SHARE
-- (step (a)) and inserts the item (c) in one statement: the INSERT reads the lock's result, so it
-- runs after it, and inserts nothing when there is no pointer. Then, if the pointer vests later
-- than the item and no consumer holds it (or its lease runs past now +
-- quick.limits.max_pointer_lease), or the item sorts below the zone's floor, or the caller is not
-- READ COMMITTED (it may see an older pointer version), it does step (d): with pull_in_transaction a READ COMMITTED caller moves the
-- pointer itself when it can lock it FOR NO KEY UPDATE without waiting (held until it commits);
-- otherwise, or when it cannot, it records a pull request.
--
-- Returns the new item's id, or NULL when it wrote nothing: no pointer, or an item quick.enqueue
-- would refuse. The caller then calls quick.enqueue, which creates the pointer or raises the
-- error. Runs inside the caller's transaction and never commits.
-- enable_sort = off: the newest-version lookups below must read the pointer index backwards. An
-- automatic ANALYZE under a held snapshot (one live pointer among thousands of dead versions) can
-- make pointers_vesting look cheaper, scanned whole for the tenant and sorted: one minute of
-- every statement walking every version (docs/benchmarks.md#ten-minutes-held-on-the-final-build-2026-11-27).
-- Any other sort this function needs has no alternative, and is kept.
CREATE OR REPLACE FUNCTION quick.enqueue_into_existing_zone(tenant text, job_type text, payload jsonb,
                                                            vesting_delay interval, priority integer,
                                                            pull_in_transaction boolean DEFAULT false)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_variable
DECLARE
    new_id          bigint;
    new_vesting     timestamptz;
    pointer_vesting timestamptz;
    pointer_lease   uuid;
    max_lease       interval;
    floor_prio      integer;
    floor_vest      timestamptz;
    needs_request   boolean;
    locked_version  tid;
BEGIN
    -- One statement: the lock (a), the limits, the tenant-login rule, the insert (c). An item
    -- quick.enqueue would refuse is not inserted: quick.enqueue then raises its error.
    -- The lock's result is not read: it can be an older version than the pointer's newest
    -- (docs/protocol.md#the-lock-can-return-an-older-version); the pointer is read again below.
    WITH p AS MATERIALIZED (
        SELECT p.tenant
          FROM quick.pointers p
         WHERE p.tenant >= tenant AND p.tenant <= tenant  -- a range, not =: see docs/protocol.md#pointer-versions
         ORDER BY p.tenant DESC LIMIT 1  -- Newest version first: LIMIT 1 stops there.
           FOR KEY SHARE),
    l AS MATERIALIZED (
        SELECT l.max_payload_bytes, l.max_vesting_delay, l.max_pointer_lease FROM quick.limits l),
    inserted AS (
        INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, payload)
        SELECT tenant, job_type, priority, statement_timestamp() + vesting_delay, statement_timestamp() + vesting_delay,
               payload
          FROM p, l
         WHERE length(tenant) BETWEEN 1 AND 200 AND length(job_type) BETWEEN 1 AND 100 AND priority IS NOT NULL
           -- quick.check_interval's comparisons: as intervals, then (CASE: only then, so that a
           -- plainly out-of-range delay cannot overflow) by the time it gives.
           AND CASE WHEN vesting_delay BETWEEN interval '0' AND l.max_vesting_delay
                    THEN statement_timestamp() + vesting_delay >= statement_timestamp()
                         AND (statement_timestamp() + vesting_delay <= statement_timestamp() + l.max_vesting_delay
                              OR (statement_timestamp() + vesting_delay) - statement_timestamp() <= l.max_vesting_delay)
                    ELSE false END
           AND octet_length(payload::text) <= l.max_payload_bytes
           AND NOT EXISTS (SELECT 1 FROM quick.tenant_logins t
                            WHERE t.login = session_user AND t.tenant IS DISTINCT FROM tenant)
        RETURNING id, vesting_time)
    SELECT inserted.id, inserted.vesting_time, l.max_pointer_lease
      INTO new_id, new_vesting, max_lease
      FROM p, l, inserted;
    IF new_id IS NULL THEN
        RETURN NULL;
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        needs_request := true;
    ELSE
        -- Judged on the pointer as this new statement reads it (a new snapshot), not as the lock
        -- returned it: a KEY SHARE lock can return a version older than a settle that raised the
        -- floor or parked the zone (docs/protocol.md#the-lock-can-return-an-older-version). The
        -- lock, now held, keeps any settle from doing so after this read. The rule is
        -- quick.record_pull_requests's, inlined (a call per item costs) beside pull_in_transaction.
        SELECT p.vesting_time, p.lease_id, p.floor_priority, p.floor_vesting
          INTO pointer_vesting, pointer_lease, floor_prio, floor_vest
          FROM quick.pointers p
         WHERE p.tenant >= tenant AND p.tenant <= tenant  -- a range, not =: newest version first
         ORDER BY p.tenant DESC LIMIT 1;
        -- Below the zone's floor (a priority below the floor's, or this statement began before a
        -- visit that raised the floor): the request lowers the floor when a consumer applies it.
        needs_request := floor_prio IS NOT NULL AND (priority, new_vesting) < (floor_prio, floor_vest);
        IF pointer_vesting > new_vesting
           AND (pointer_lease IS NULL OR pointer_vesting > statement_timestamp() + max_lease) THEN
            -- The lock takes the version the pointer read above found, with its conditions; a
            -- version replaced since is not taken (docs/protocol.md#pointer-versions), and a
            -- request is recorded instead. The update, a new statement (this path is READ
            -- COMMITTED only), reaches the locked version by its ctid: a lookup by tenant would
            -- walk every older one.
            locked_version := NULL;
            IF pull_in_transaction AND pointer_lease IS NULL THEN
                -- The newest version first, without a filter or a lock, then locked by its ctid:
                -- one passed over (locked, or settled meanwhile) would send the lookup through
                -- every older version (docs/protocol.md#pointer-versions).
                SELECT x.ctid INTO locked_version FROM quick.pointers x
                 WHERE x.ctid = (SELECT n.ctid FROM quick.pointers n
                                  WHERE n.tenant >= tenant AND n.tenant <= tenant  -- a range, not =: newest first
                                  ORDER BY n.tenant DESC LIMIT 1)
                   AND x.vesting_time > new_vesting AND x.lease_id IS NULL
                   FOR NO KEY UPDATE SKIP LOCKED;
            END IF;
            IF locked_version IS NOT NULL THEN
                UPDATE quick.pointers p SET vesting_time = new_vesting WHERE p.ctid = locked_version;
            END IF;
            IF locked_version IS NOT NULL AND FOUND THEN
                PERFORM quick.notify_consumers();  -- the zone vests at commit, unannounced otherwise
            ELSE
                needs_request := true;
            END IF;
        END IF;
    END IF;
    IF needs_request THEN
        INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority) VALUES (tenant, new_vesting, priority);
    END IF;
    RETURN new_id;
END
$$;
REVOKE ALL ON FUNCTION quick.enqueue_into_existing_zone(text,text,jsonb,interval,integer,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.enqueue_into_existing_zone(text,text,jsonb,interval,integer,boolean) TO quick_producer, quick_admin;
