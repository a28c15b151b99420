-- A tenant move, at its destination: the last statement of the move's transaction there. Gives
-- the zone its pointer after its items are in (as the paper's user-move does), vesting with the
-- zone's earliest item, or now if that vested before (an existing pointer is pulled in, never
-- pushed back), and carries over a pause. Returns the number of the tenant's items here.
--
-- Never a vesting time before this statement's start: the moved items keep their vesting times,
-- which can lie hours back, and the Scanner reads pointers from floors near now
-- (docs/consumer.md#scanning-from-a-floor); a pointer written below them would wait for the next
-- full scan. resume_tenant.sql does the same for a pointer that vested while its tenant was paused.
CREATE OR REPLACE FUNCTION quick.move_in_finish(tenant text, paused boolean, pause_reason text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    first_vesting   timestamptz;
    item_count      bigint;
    pointer_version tid;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_in_finish');
    PERFORM quick.check_move_read_committed('quick.move_in_finish');
    PERFORM quick.check_not_null(paused IS NULL, 'paused', 'quick.move_in_finish');
    SELECT greatest(min(i.vesting_time), statement_timestamp()), count(*) INTO first_vesting, item_count
      FROM quick.items i WHERE i.tenant = tenant;
    IF item_count > 0 THEN
        -- The existing pointer, locked so that no collection deletes it before this commits (the
        -- moved-in items are not visible to a collection yet), is pulled in; else a new one is
        -- inserted, which inserts nothing when a concurrent creator won (pointer_slots.sql):
        -- then the loop locks that one. READ COMMITTED (quick.check_move_read_committed): each
        -- statement sees what committed before it, and the update reaches the version the lock
        -- took.
        LOOP
            SELECT p.ctid INTO pointer_version FROM quick.pointers p
             WHERE p.tenant >= tenant AND p.tenant <= tenant  -- a range, not =: see docs/protocol.md#pointer-versions
             ORDER BY p.tenant DESC LIMIT 1
               FOR NO KEY UPDATE;
            IF FOUND THEN
                -- The moved-in items may sort below the floor the pointer has: it goes (scans
                -- start at the zone's beginning until a visit raises it again).
                UPDATE quick.pointers p SET vesting_time = least(p.vesting_time, first_vesting),
                                            floor_priority = NULL, floor_vesting = NULL
                 WHERE p.ctid = pointer_version;
                EXIT;
            END IF;
            INSERT INTO quick.pointers (tenant, vesting_time, last_active_time)
            VALUES (tenant, first_vesting, statement_timestamp());
            EXIT WHEN FOUND;
        END LOOP;
    END IF;
    IF paused THEN
        INSERT INTO quick.paused_tenants (tenant, reason) VALUES (tenant, pause_reason)
        ON CONFLICT ON CONSTRAINT paused_tenants_pkey DO NOTHING;
    END IF;
    RETURN item_count;
END
$$;
REVOKE ALL ON FUNCTION quick.move_in_finish(text,boolean,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_in_finish(text,boolean,text) TO quick_admin;
