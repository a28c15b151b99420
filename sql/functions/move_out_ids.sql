-- A tenant move, at its source: the ids of the tenant's items in zone order (priority,
-- zone_time, id), or of its dead items (with dead_items). The mover then reads them in batches
-- of ids (quick.move_out_items, quick.move_out_dead_items): each batch is found through the
-- primary key, so copying a zone costs the same per item however large it is. Call after
-- quick.move_out_begin, in its transaction: the rows are locked, so the list does not change.
CREATE OR REPLACE FUNCTION quick.move_out_ids(tenant text, dead_items boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_ids');
    PERFORM quick.check_move_read_committed('quick.move_out_ids');
    PERFORM quick.check_not_null(dead_items IS NULL, 'dead_items', 'quick.move_out_ids');
    IF dead_items THEN
        RETURN QUERY SELECT d.id FROM quick.dead_items d WHERE d.tenant = tenant ORDER BY d.id;
    ELSE
        RETURN QUERY SELECT i.id FROM quick.items i WHERE i.tenant = tenant ORDER BY i.priority, i.zone_time, i.id;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_ids(text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_ids(text,boolean) TO quick_admin;
