-- Lease the named pointers that are vested and not locked; returns the ones won. A pointer lease
-- reserves the whole zone for lease_duration.
CREATE OR REPLACE FUNCTION quick.lease_pointers(tenants text[], lease_duration interval)
RETURNS TABLE (tenant text, lease_id uuid, last_active_time timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(tenants IS NULL, 'tenants', 'quick.lease_pointers');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.lease_pointers', false,
                                 (SELECT l.max_pointer_lease FROM quick.limits l), 'max_pointer_lease');
    RETURN QUERY
    WITH chosen AS MATERIALIZED (
        SELECT p.tenant FROM quick.pointers p
         WHERE p.tenant = ANY (tenants) AND p.vesting_time <= statement_timestamp()
         ORDER BY p.tenant
         FOR NO KEY UPDATE SKIP LOCKED)
    UPDATE quick.pointers p
       SET vesting_time = statement_timestamp() + lease_duration, lease_id = gen_random_uuid()
      FROM chosen WHERE p.tenant = chosen.tenant
    RETURNING p.tenant, p.lease_id, p.last_active_time;
END
$$;
REVOKE ALL ON FUNCTION quick.lease_pointers(text[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.lease_pointers(text[],interval) TO quick_consumer, quick_admin;
