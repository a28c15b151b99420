-- Lease up to max_pointers vested pointers in vesting order (the in-order Scanner's peek+lease).
CREATE OR REPLACE FUNCTION quick.lease_next_pointers(max_pointers integer, lease_duration interval)
RETURNS TABLE (tenant text, lease_id uuid, last_active_time timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.lease_next_pointers', false,
                                 (SELECT l.max_pointer_lease FROM quick.limits l), 'max_pointer_lease');
    PERFORM quick.check_argument(max_pointers > 0,
        'quick.lease_next_pointers: max_pointers must be positive, got %s', coalesce(max_pointers::text, 'NULL'));
    RETURN QUERY
    WITH chosen AS MATERIALIZED (
        SELECT p.tenant FROM quick.pointers p
         WHERE p.vesting_time <= statement_timestamp()
         ORDER BY p.vesting_time, p.tenant
         LIMIT max_pointers
         FOR NO KEY UPDATE SKIP LOCKED)
    UPDATE quick.pointers p
       SET vesting_time = statement_timestamp() + lease_duration, lease_id = gen_random_uuid()
      FROM chosen WHERE p.tenant = chosen.tenant
    RETURNING p.tenant, p.lease_id, p.last_active_time;
END
$$;
REVOKE ALL ON FUNCTION quick.lease_next_pointers(integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.lease_next_pointers(integer,interval) TO quick_consumer, quick_admin;
