-- Give a lease back without counting an error (throttled items, a consumer that stops).
CREATE OR REPLACE FUNCTION quick.release_lease(item_id bigint, lease_id uuid, vesting_delay interval DEFAULT '0')
RETURNS quick.outcome
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    zone     text;
    vests_at timestamptz;
    prio     integer;
BEGIN
    PERFORM quick.check_not_null(release_lease.item_id IS NULL, 'item_id', 'quick.release_lease');
    PERFORM quick.check_not_null(release_lease.lease_id IS NULL, 'lease_id', 'quick.release_lease');
    PERFORM quick.check_interval(release_lease.vesting_delay, 'vesting_delay', 'quick.release_lease', true,
                                 (SELECT l.max_vesting_delay FROM quick.limits l), 'max_vesting_delay');
    UPDATE quick.items i
       SET vesting_time = statement_timestamp() + release_lease.vesting_delay,
           zone_time = statement_timestamp() + release_lease.vesting_delay, lease_id = NULL
     WHERE i.id = release_lease.item_id AND i.lease_id = release_lease.lease_id
    RETURNING i.tenant, i.vesting_time, i.priority INTO zone, vests_at, prio;
    IF FOUND THEN
        PERFORM quick.request_pointer_pulls(ARRAY[zone], ARRAY[vests_at], ARRAY[prio]);
        RETURN 'done';
    END IF;
    RETURN quick.item_miss_reason(release_lease.item_id);
END
$$;
REVOKE ALL ON FUNCTION quick.release_lease(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.release_lease(bigint,uuid,interval) TO quick_consumer, quick_admin;
