-- Extend the leases of running items in one statement. Returns the items whose lease was
-- extended; any other item of the input has lost its lease (re-leased, or gone).
CREATE OR REPLACE FUNCTION quick.extend_item_leases(item_ids bigint[], lease_ids uuid[], lease_duration interval)
RETURNS TABLE (item_id bigint, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(item_ids IS NULL, 'item_ids', 'quick.extend_item_leases');
    PERFORM quick.check_not_null(lease_ids IS NULL, 'lease_ids', 'quick.extend_item_leases');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.extend_item_leases', false,
                                 (SELECT l.max_item_lease FROM quick.limits l), 'max_item_lease');
    PERFORM quick.check_argument(cardinality(item_ids) = cardinality(lease_ids),
        'quick.extend_item_leases: item_ids and lease_ids must have the same length');
    RETURN QUERY
    UPDATE quick.items i SET vesting_time = statement_timestamp() + lease_duration
      FROM unnest(item_ids, lease_ids) u(id, lease)
     WHERE i.id = u.id AND i.lease_id = u.lease
    RETURNING i.id, i.vesting_time;
END
$$;
REVOKE ALL ON FUNCTION quick.extend_item_leases(bigint[],uuid[],interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.extend_item_leases(bigint[],uuid[],interval) TO quick_consumer, quick_admin;
