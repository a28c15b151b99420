-- Resume a paused tenant (quick.pause_tenant). Returns true when it was paused. Its pointer is
-- usually vested already; a pull request for now wakes the consumers (the pull-request trigger
-- notifies them) rather than leaving the zone to the next poll. Like quick.pause_tenant, it waits
-- for a move of the tenant, and refuses with QM001 once the tenant moved away.
CREATE OR REPLACE FUNCTION quick.resume_tenant(tenant text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.check_not_null(resume_tenant.tenant IS NULL, 'tenant', 'quick.resume_tenant');
    PERFORM quick.check_not_empty(resume_tenant.tenant, 'tenant', 'quick.resume_tenant');
    PERFORM quick.check_tenants_here(ARRAY[resume_tenant.tenant], 'quick.resume_tenant');
    DELETE FROM quick.paused_tenants t WHERE t.tenant = resume_tenant.tenant;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- A pointer that vested while the tenant was paused kept its vesting time, which the Scanners'
    -- floors have passed since (docs/consumer.md#scanning-from-a-floor): it vests now instead.
    UPDATE quick.pointers p SET vesting_time = statement_timestamp()
     WHERE p.tenant = resume_tenant.tenant AND p.vesting_time < statement_timestamp();
    INSERT INTO quick.pointer_pulls (tenant, vesting_time)
    SELECT p.tenant, statement_timestamp() FROM quick.pointers p WHERE p.tenant = resume_tenant.tenant;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION quick.resume_tenant(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.resume_tenant(text) TO quick_admin;
