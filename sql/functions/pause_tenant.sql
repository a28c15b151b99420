-- Pause a tenant: consumers stop taking its zone (quick.peek_pointers and quick.visit_zones skip
-- it), while enqueue still works and items already leased finish. Returns true when it was not
-- paused before. Visible in quick.paused, quick.zone_depth and the dashboard; undone by
-- quick.resume_tenant. The zone keeps its pointer: pausing never touches the invariant.
-- A tenant being moved (docs/scaling.md#moving-a-tenant) is paused after the move: the move's
-- lock is waited for, as by an enqueue (quick.check_tenants_here), and a tenant that moved away
-- is refused with QM001, naming its database, instead of a pause the move would not carry over.
CREATE OR REPLACE FUNCTION quick.pause_tenant(tenant text, reason text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_argument(coalesce(length(pause_tenant.tenant) BETWEEN 1 AND 200, false),
        'quick.pause_tenant: tenant must be 1 to 200 characters, got %s',
        coalesce(quote_literal(left(pause_tenant.tenant, 40)), 'NULL'));
    PERFORM quick.check_tenants_here(ARRAY[pause_tenant.tenant], 'quick.pause_tenant');
    INSERT INTO quick.paused_tenants AS t (tenant, reason)
    VALUES (pause_tenant.tenant, pause_tenant.reason)
    ON CONFLICT ON CONSTRAINT paused_tenants_pkey DO NOTHING;
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION quick.pause_tenant(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.pause_tenant(text,text) TO quick_admin;
