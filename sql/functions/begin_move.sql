-- The placement directory: records that move `move_id` of `tenant` from `from_database` to
-- `to_database` starts, undecided (docs/scaling.md#crash-safety). The mover calls it before it
-- prepares anything, so that every prepared transaction of a move has its row here, which
-- recovery reads. Returns false when the move was recorded already.
CREATE OR REPLACE FUNCTION quick.begin_move(move_id uuid, tenant text, from_database text, to_database text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.begin_move');
    PERFORM quick.check_movable_tenant(tenant, 'quick.begin_move');
    PERFORM quick.check_argument(coalesce(length(from_database) BETWEEN 1 AND 100, false),
        'quick.begin_move: from_database must be 1 to 100 characters, got %s',
        coalesce(length(from_database) || ' characters', 'NULL'));
    PERFORM quick.check_argument(coalesce(length(to_database) BETWEEN 1 AND 100, false),
        'quick.begin_move: to_database must be 1 to 100 characters, got %s',
        coalesce(length(to_database) || ' characters', 'NULL'));
    PERFORM quick.check_argument(from_database <> to_database,
        'quick.begin_move: from_database and to_database are both %s', quote_literal(to_database));
    INSERT INTO quick.tenant_moves (move_id, tenant, from_database, to_database)
    VALUES (move_id, tenant, from_database, to_database)
    ON CONFLICT ON CONSTRAINT tenant_moves_pkey DO NOTHING;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.begin_move(uuid,text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.begin_move(uuid,text,text,text) TO quick_admin;
