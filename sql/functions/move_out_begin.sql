-- A tenant move, at its source (docs/scaling.md#moving-a-tenant): the first statement of the
-- move's transaction there. Locks the tenant against everything that could change its rows while
-- they are copied: its move lock (exclusive: enqueues that would create its pointer wait, and so
-- does another move of it), its pointer FOR UPDATE (enqueues into the existing zone wait; a visit
-- holding the pointer is waited for), its items and dead items FOR UPDATE (a worker's completion,
-- retry or lease extension waits, then finds the item gone and reports its lease lost); and it
-- updates the tenant's quick.placement_guards row. Then it writes the fence, quick.moved_tenants,
-- which takes effect when the move commits. Waits as long as the session's lock_timeout allows.
-- READ COMMITTED only, as every move function (quick.check_move_read_committed): the statements
-- after the locks must see what the transactions they waited for committed.
-- Returns what will move. The items are then read with quick.move_out_items and
-- quick.move_out_dead_items, and deleted with quick.move_out_finish, in the same transaction.
CREATE OR REPLACE FUNCTION quick.move_out_begin(tenant text, to_database text, move_id uuid)
RETURNS TABLE (items bigint, dead_items bigint, paused boolean, pause_reason text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    fenced_to text;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_begin');
    PERFORM quick.check_move_read_committed('quick.move_out_begin');
    PERFORM quick.check_argument(coalesce(length(to_database) BETWEEN 1 AND 100, false),
        'quick.move_out_begin: to_database must be 1 to 100 characters, got %s',
        coalesce(length(to_database) || ' characters', 'NULL'));
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.move_out_begin');

    PERFORM pg_catalog.pg_advisory_xact_lock(quick.tenant_lock_key(tenant));
    UPDATE quick.placement_guards g SET moves = g.moves + 1 WHERE g.shard = quick.placement_shard(tenant);
    SELECT m.moved_to INTO fenced_to FROM quick.moved_tenants m WHERE m.tenant = tenant;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'QM001',
            MESSAGE = format('quick.move_out_begin: tenant %s is not in database %s: it moved to database "%s"',
                             quote_literal(tenant), quote_ident(current_database()), fenced_to),
            DETAIL = json_build_object('tenant', tenant, 'moved_to', fenced_to)::text;
    END IF;
    PERFORM 1 FROM quick.pointers p WHERE p.tenant = tenant FOR UPDATE;
    PERFORM 1 FROM quick.items i WHERE i.tenant = tenant ORDER BY i.id FOR UPDATE;
    PERFORM 1 FROM quick.dead_items d WHERE d.tenant = tenant ORDER BY d.id FOR UPDATE;
    INSERT INTO quick.moved_tenants (tenant, moved_to, move_id) VALUES (tenant, to_database, move_id);

    RETURN QUERY
    SELECT (SELECT count(*) FROM quick.items i WHERE i.tenant = tenant),
           (SELECT count(*) FROM quick.dead_items d WHERE d.tenant = tenant),
           EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = tenant),
           (SELECT t.reason FROM quick.paused_tenants t WHERE t.tenant = tenant);
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_begin(text,text,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_begin(text,text,uuid) TO quick_admin;
