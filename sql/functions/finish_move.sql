-- The placement directory: marks move `move_id` finished (both databases committed or rolled
-- back its transactions). Returns false when it was finished already or is unknown.
CREATE OR REPLACE FUNCTION quick.finish_move(move_id uuid)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.finish_move');
    UPDATE quick.tenant_moves m SET finished_at = statement_timestamp()
     WHERE m.move_id = move_id AND m.finished_at IS NULL;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.finish_move(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.finish_move(uuid) TO quick_admin;
