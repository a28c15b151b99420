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
