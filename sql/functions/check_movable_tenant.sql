-- The tenant argument of the move functions: 1 to 200 characters, and not a local zone (a tenant
-- key starting with '@local:', quick.local_tenant): local items belong to their database and are
-- never moved (docs/scaling.md#local-items).
CREATE OR REPLACE FUNCTION quick.check_movable_tenant(tenant text, caller text)
RETURNS void LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_argument(coalesce(length(tenant) BETWEEN 1 AND 200, false),
        '%s: tenant must be 1 to 200 characters, got %s', caller,
        coalesce(length(tenant) || ' characters', 'NULL'));
    PERFORM quick.check_argument(NOT starts_with(tenant, '@local:'),
        '%s: tenant %s is a local zone: local items belong to their database and are never placed or moved',
        caller, quote_literal(tenant));
END
$$;
REVOKE ALL ON FUNCTION quick.check_movable_tenant(text,text) FROM PUBLIC;

-- The transaction of a move function: READ COMMITTED, else invalid_transaction_state (as
-- quick.visit_zones and quick.settle_pointers check, inline). A move's statements after its locks
-- must see what the transactions those locks waited for committed: at a snapshot isolation level
-- an enqueuer's item, committed while quick.move_out_begin waited for the tenant's pointer, is
-- neither copied nor deleted, and stays behind without a pointer once the move deletes it.
CREATE OR REPLACE FUNCTION quick.check_move_read_committed(caller text)
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_transaction_state',
            MESSAGE = format('%s must run in READ COMMITTED, not %s: a tenant move must see what the '
                             'transactions its locks waited for committed, or it leaves their items behind',
                             caller, upper(current_setting('transaction_isolation')));
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_move_read_committed(text) FROM PUBLIC;
