-- Requeue after a failure: the item vests again after vesting_delay, its error count goes up by
-- one and the lease is released. With a lease id only the holder succeeds; without one (quick_admin
-- only) the item is requeued whatever its lease.
CREATE OR REPLACE FUNCTION quick.requeue(item_id bigint, lease_id uuid, vesting_delay interval DEFAULT '0',
                                         error text DEFAULT NULL)
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
    PERFORM quick.check_not_null(requeue.item_id IS NULL, 'item_id', 'quick.requeue');
    IF requeue.lease_id IS NULL THEN
        PERFORM quick.check_administrator('quick.requeue', 'requeueing an item whatever its lease (no lease_id)');
    END IF;
    PERFORM quick.check_interval(requeue.vesting_delay, 'vesting_delay', 'quick.requeue', true,
                                 (SELECT l.max_vesting_delay FROM quick.limits l), 'max_vesting_delay');
    UPDATE quick.items i
       SET vesting_time = statement_timestamp() + requeue.vesting_delay,
           zone_time = statement_timestamp() + requeue.vesting_delay, lease_id = NULL,
           error_count = i.error_count + 1, last_error = coalesce(requeue.error, i.last_error)
     WHERE i.id = requeue.item_id
       AND (requeue.lease_id IS NULL OR i.lease_id = requeue.lease_id)
    RETURNING i.tenant, i.vesting_time, i.priority INTO zone, vests_at, prio;
    IF FOUND THEN
        PERFORM quick.request_pointer_pulls(ARRAY[zone], ARRAY[vests_at], ARRAY[prio]);
        RETURN 'done';
    END IF;
    RETURN quick.item_miss_reason(requeue.item_id);
END
$$;
REVOKE ALL ON FUNCTION quick.requeue(bigint,uuid,interval,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.requeue(bigint,uuid,interval,text) TO quick_consumer, quick_admin;
