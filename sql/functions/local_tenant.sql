-- The tenant key of a local zone named `name`: '@local:' || name. A local zone holds work that
-- belongs to no tenant (the paper's local items, such as maintenance of the whole database): it is
-- enqueued into the database chosen by the producer, served like any zone, and never placed or
-- moved (docs/scaling.md#local-items).
CREATE OR REPLACE FUNCTION quick.local_tenant(name text)
RETURNS text LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_argument(coalesce(length(name) BETWEEN 1 AND 193, false),
        'quick.local_tenant: name must be 1 to 193 characters, got %s', coalesce(length(name) || ' characters', 'NULL'));
    RETURN '@local:' || name;
END
$$;
REVOKE ALL ON FUNCTION quick.local_tenant(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.local_tenant(text) TO quick_producer, quick_consumer, quick_admin;
