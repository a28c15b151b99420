-- The placement directory: records that `tenant` is in `database_name` without moving anything.
-- For tenants with no queued work yet (to place a new tenant somewhere the default rule would
-- not), or to repair the directory after a manual move; to move a tenant with its work, use
-- `quick tenant move`. Returns the database it was placed in before (NULL for the default rule).
CREATE OR REPLACE FUNCTION quick.place_tenant(tenant text, database_name text)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    before text;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.place_tenant');
    IF NOT EXISTS (SELECT 1 FROM quick.placement_databases d WHERE d.name = database_name) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('quick.place_tenant: database_name %s is not a registered placement database '
                             '(quick.add_placement_database)', coalesce(quote_literal(database_name), 'NULL'));
    END IF;
    SELECT p.database_name INTO before FROM quick.tenant_placements p WHERE p.tenant = tenant FOR UPDATE;
    INSERT INTO quick.tenant_placements AS p (tenant, database_name) VALUES (tenant, database_name)
    ON CONFLICT ON CONSTRAINT tenant_placements_pkey
    DO UPDATE SET database_name = excluded.database_name, placed_at = excluded.placed_at, move_id = NULL;
    RETURN before;
END
$$;
REVOKE ALL ON FUNCTION quick.place_tenant(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.place_tenant(text,text) TO quick_admin;
