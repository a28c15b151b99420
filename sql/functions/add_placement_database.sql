-- The placement directory: registers a database tenants may be placed in, by the name the
-- configuration gives it. With in_default_rule (the default) it also takes a share of the tenants
-- nobody placed explicitly: give that only to the databases you start with (quick.tenant_database).
-- Returns false when the name was registered already (nothing changes then).
CREATE OR REPLACE FUNCTION quick.add_placement_database(name text, in_default_rule boolean DEFAULT true)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
BEGIN
    PERFORM quick.check_argument(coalesce(length(name) BETWEEN 1 AND 100, false),
        'quick.add_placement_database: name must be 1 to 100 characters, got %s',
        coalesce(length(name) || ' characters', 'NULL'));
    PERFORM quick.check_not_null(in_default_rule IS NULL, 'in_default_rule', 'quick.add_placement_database');
    INSERT INTO quick.placement_databases (name, in_default_rule) VALUES (name, in_default_rule)
    ON CONFLICT ON CONSTRAINT placement_databases_pkey DO NOTHING;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.add_placement_database(text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.add_placement_database(text,boolean) TO quick_admin;
