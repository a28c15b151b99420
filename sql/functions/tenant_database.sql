-- The placement directory (docs/scaling.md#placement): the name of the database that holds
-- `tenant`, read in the directory database. A tenant placed explicitly (by a move, or by
-- quick.place_tenant) is in its quick.tenant_placements row's database; any other tenant is placed
-- by the default rule, a rendezvous hash over the quick.placement_databases marked
-- in_default_rule: the one whose hash of (tenant, name) is highest. Adding a database to the
-- default rule re-places about 1/n of the tenants nobody placed, so add new databases outside it
-- and move tenants onto them. NULL when no database is registered.
CREATE OR REPLACE FUNCTION quick.tenant_database(tenant text)
RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    placed text;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.tenant_database');
    SELECT p.database_name INTO placed FROM quick.tenant_placements p WHERE p.tenant = tenant;
    IF FOUND THEN
        RETURN placed;
    END IF;
    RETURN (SELECT d.name FROM quick.placement_databases d WHERE d.in_default_rule
             ORDER BY hashtextextended(tenant || '/' || d.name, 0) DESC, d.name LIMIT 1);
END
$$;
REVOKE ALL ON FUNCTION quick.tenant_database(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.tenant_database(text) TO quick_producer, quick_consumer, quick_admin;
