-- Take a lease on one vested item: one that no live lease holds and whose vesting time has come
-- (an item enqueued with a delay cannot be leased before it vests). Otherwise lease_lost, or
-- item_gone when it does not exist.
CREATE OR REPLACE FUNCTION quick.obtain_lease(item_id bigint, lease_duration interval)
RETURNS TABLE (outcome quick.outcome, lease_id uuid, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(obtain_lease.item_id IS NULL, 'item_id', 'quick.obtain_lease');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.obtain_lease', false,
                                 (SELECT l.max_item_lease FROM quick.limits l), 'max_item_lease');
    UPDATE quick.items i
       SET lease_id = gen_random_uuid(), vesting_time = statement_timestamp() + lease_duration
     WHERE i.id = obtain_lease.item_id
       AND i.vesting_time <= statement_timestamp()
    RETURNING 'done'::quick.outcome, i.lease_id, i.vesting_time
         INTO outcome, lease_id, lease_expires_at;
    IF NOT FOUND THEN
        outcome := CASE WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = obtain_lease.item_id)
                        THEN 'lease_lost' ELSE 'item_gone' END;
    END IF;
    RETURN NEXT;
END
$$;
REVOKE ALL ON FUNCTION quick.obtain_lease(bigint,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.obtain_lease(bigint,interval) TO quick_consumer, quick_admin;
