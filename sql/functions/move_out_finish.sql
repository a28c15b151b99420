-- A tenant move, at its source: the last statement of the move's transaction there. Deletes what
-- moved (the tenant's items, dead items, pull requests, pause and pointer: the zone is empty, so
-- the invariant holds) and returns how many items and dead items it deleted, which the mover
-- compares with what it copied. Refuses unless quick.move_out_begin fenced the tenant for this
-- move.
CREATE OR REPLACE FUNCTION quick.move_out_finish(tenant text, move_id uuid)
RETURNS TABLE (items bigint, dead_items bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_finish');
    PERFORM quick.check_move_read_committed('quick.move_out_finish');
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.move_out_finish');
    IF NOT EXISTS (SELECT 1 FROM quick.moved_tenants m WHERE m.tenant = tenant AND m.move_id = move_id) THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('quick.move_out_finish: tenant %s is not being moved by move %s here: call '
                             'quick.move_out_begin first, in the same transaction', quote_literal(tenant), move_id);
    END IF;
    WITH i AS (DELETE FROM quick.items i WHERE i.tenant = tenant RETURNING 1)
    SELECT count(*) INTO items FROM i;
    WITH d AS (DELETE FROM quick.dead_items d WHERE d.tenant = tenant RETURNING 1)
    SELECT count(*) INTO dead_items FROM d;
    DELETE FROM quick.pointer_pulls r WHERE r.tenant = tenant;
    DELETE FROM quick.paused_tenants t WHERE t.tenant = tenant;
    DELETE FROM quick.pointers p WHERE p.tenant = tenant;
    RETURN NEXT;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_finish(text,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_finish(text,uuid) TO quick_admin;
