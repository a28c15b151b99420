-- A tenant move, at its destination: the first statement of the move's transaction there. Takes
-- the tenant's move lock exclusively (enqueues that would create its pointer here wait for the
-- move), locks its pointer here, if it has one, FOR UPDATE, removes the fence an earlier move away
-- from here left (it takes effect when the move commits), and turns off the wake-up notification
-- for the rest of the transaction, which will be prepared (PREPARE TRANSACTION refuses one that
-- notified): the mover wakes the consumers after it commits.
CREATE OR REPLACE FUNCTION quick.move_in_begin(tenant text, from_database text, move_id uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_in_begin');
    PERFORM quick.check_move_read_committed('quick.move_in_begin');
    PERFORM quick.check_argument(coalesce(length(from_database) BETWEEN 1 AND 100, false),
        'quick.move_in_begin: from_database must be 1 to 100 characters, got %s',
        coalesce(length(from_database) || ' characters', 'NULL'));
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.move_in_begin');
    PERFORM set_config('quick.wake_consumers', 'off', true);
    PERFORM pg_catalog.pg_advisory_xact_lock(quick.tenant_lock_key(tenant));
    UPDATE quick.placement_guards g SET moves = g.moves + 1 WHERE g.shard = quick.placement_shard(tenant);
    PERFORM 1 FROM quick.pointers p WHERE p.tenant = tenant FOR UPDATE;
    DELETE FROM quick.moved_tenants m WHERE m.tenant = tenant;
END
$$;
REVOKE ALL ON FUNCTION quick.move_in_begin(text,text,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_in_begin(text,text,uuid) TO quick_admin;
