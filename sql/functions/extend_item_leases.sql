-- Extend the leases of held items in one statement, without waiting: an item whose row another
-- transaction holds right now (its handler's own transaction completing it, an acknowledgment
-- being written, an operator) is skipped. Returns the items whose lease was extended, with the new
-- expiry, and the skipped items that still carry their lease, with a NULL expiry: not extended
-- this time, not lost. Any other item of the input has lost its lease (re-leased, or gone).
CREATE OR REPLACE FUNCTION quick.extend_item_leases(item_ids bigint[], lease_ids uuid[], lease_duration interval)
RETURNS TABLE (item_id bigint, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(item_ids IS NULL, 'item_ids', 'quick.extend_item_leases');
    PERFORM quick.check_not_null(lease_ids IS NULL, 'lease_ids', 'quick.extend_item_leases');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.extend_item_leases', false,
                                 (SELECT l.max_item_lease FROM quick.limits l), 'max_item_lease');
    PERFORM quick.check_argument(cardinality(item_ids) = cardinality(lease_ids),
        'quick.extend_item_leases: item_ids and lease_ids must have the same length');
    RETURN QUERY
    WITH wanted AS MATERIALIZED (
        SELECT u.id, u.lease FROM unnest(item_ids, lease_ids) u(id, lease)),
    -- One index lookup per item, each row locked as it is reached, never waited for.
    free AS MATERIALIZED (
        SELECT x.id
          FROM wanted w
         CROSS JOIN LATERAL (
               SELECT i.id FROM quick.items i
                WHERE i.id = w.id AND i.lease_id = w.lease
                  FOR NO KEY UPDATE SKIP LOCKED) x),
    extended AS (
        -- Never earlier than the lease ends now: an extension never shortens a lease. Only
        -- vesting_time changes, not the item's place in its zone (zone_time).
        UPDATE quick.items i SET vesting_time = greatest(i.vesting_time, statement_timestamp() + lease_duration)
          FROM free f
         WHERE i.id = f.id AND i.id = ANY (ARRAY(SELECT f2.id FROM free f2))
        RETURNING i.id, i.vesting_time)
    SELECT e.id, e.vesting_time FROM extended e
    UNION ALL
    SELECT w.id, NULL::timestamptz
      FROM wanted w
     WHERE w.id <> ALL (ARRAY(SELECT f.id FROM free f))
       AND EXISTS (SELECT 1 FROM quick.items i WHERE i.id = w.id AND i.lease_id = w.lease);
END
$$;
REVOKE ALL ON FUNCTION quick.extend_item_leases(bigint[],uuid[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.extend_item_leases(bigint[],uuid[],interval) TO quick_consumer, quick_admin;
