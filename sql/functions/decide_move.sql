-- The placement directory: decides move `move_id` once, and returns the decision in force
-- (docs/scaling.md#crash-safety). The mover calls it with 'commit' after both databases prepared
-- their transactions; recovery (`quick tenant move --resume`, `quick doctor`) with 'abort' for a
-- prepared move it finds undecided. Whichever comes first wins, so a mover that recovery overtook
-- rolls back. A commit also places the tenant in the move's to_database, in the same transaction:
-- the directory changes exactly when the move is decided. NULL for a move never begun
-- (quick.begin_move): nothing can commit it, so its prepared transactions are rolled back.
CREATE OR REPLACE FUNCTION quick.decide_move(move_id uuid, decision text, decided_by text, items bigint DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    move quick.tenant_moves;
BEGIN
    PERFORM quick.check_not_null(move_id IS NULL, 'move_id', 'quick.decide_move');
    PERFORM quick.check_argument(coalesce(decision IN ('commit', 'abort'), false),
        'quick.decide_move: decision must be ''commit'' or ''abort'', got %s', coalesce(quote_literal(decision), 'NULL'));
    PERFORM quick.check_argument(coalesce(decided_by IN ('mover', 'recovery'), false),
        'quick.decide_move: decided_by must be ''mover'' or ''recovery'', got %s',
        coalesce(quote_literal(decided_by), 'NULL'));
    UPDATE quick.tenant_moves m
       SET decision = decide_move.decision, decided_at = statement_timestamp(), decided_by = decide_move.decided_by,
           items = coalesce(decide_move.items, m.items)
     WHERE m.move_id = move_id AND m.decision IS NULL
    RETURNING * INTO move;
    IF FOUND AND move.decision = 'commit' THEN
        INSERT INTO quick.placement_databases (name, in_default_rule) VALUES (move.to_database, false)
        ON CONFLICT ON CONSTRAINT placement_databases_pkey DO NOTHING;
        INSERT INTO quick.tenant_placements AS p (tenant, database_name, move_id)
        VALUES (move.tenant, move.to_database, move.move_id)
        ON CONFLICT ON CONSTRAINT tenant_placements_pkey
        DO UPDATE SET database_name = excluded.database_name, placed_at = excluded.placed_at,
                      move_id = excluded.move_id;
    END IF;
    RETURN (SELECT m.decision FROM quick.tenant_moves m WHERE m.move_id = move_id);
END
$$;
REVOKE ALL ON FUNCTION quick.decide_move(uuid,text,text,bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.decide_move(uuid,text,text,bigint) TO quick_admin;
