-- Peek and lease in one statement. SKIP LOCKED: concurrent dequeuers take disjoint items. A lease
-- sets vesting_time (when it runs out) and leaves zone_time, the item's place in the zone index:
-- the update changes no indexed column (docs/protocol.md#zone-time-and-leases).
CREATE OR REPLACE FUNCTION quick.dequeue(tenant text, max_items integer, lease_duration interval,
                                         job_type text DEFAULT NULL)
RETURNS SETOF quick.items
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_argument(dequeue.max_items > 0,
        'quick.dequeue: max_items must be positive, got %s', coalesce(dequeue.max_items::text, 'NULL'));
    PERFORM quick.check_not_null(dequeue.tenant IS NULL, 'tenant', 'quick.dequeue');
    PERFORM quick.check_not_empty(dequeue.tenant, 'tenant', 'quick.dequeue');
    PERFORM quick.check_not_empty(dequeue.job_type, 'job_type', 'quick.dequeue', 'takes every job type');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.dequeue', false,
                                 (SELECT l.max_item_lease FROM quick.limits l), 'max_item_lease');
    RETURN QUERY
    WITH chosen AS MATERIALIZED (
        SELECT i.id FROM quick.items i
         WHERE i.tenant = dequeue.tenant AND i.zone_time <= statement_timestamp()
           AND i.vesting_time <= statement_timestamp()
           AND (dequeue.job_type IS NULL OR i.job_type = dequeue.job_type)
         ORDER BY i.priority, i.zone_time
         LIMIT dequeue.max_items
         FOR NO KEY UPDATE SKIP LOCKED)
    UPDATE quick.items i
       SET lease_id = gen_random_uuid(), vesting_time = statement_timestamp() + lease_duration
      FROM chosen WHERE i.id = chosen.id
    RETURNING i.*;
END
$$;
REVOKE ALL ON FUNCTION quick.dequeue(text,integer,interval,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dequeue(text,integer,interval,text) TO quick_consumer, quick_admin;
