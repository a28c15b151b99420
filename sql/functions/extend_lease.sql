-- Extend a lease: succeeds while the caller's lease id is still on the item, i.e. the lease is
-- live, or it ran out but nobody leased the item since. The lease then ends lease_duration from
-- now, or when it already did if that is later: an extension never shortens a lease.
CREATE OR REPLACE FUNCTION quick.extend_lease(item_id bigint, lease_id uuid, lease_duration interval)
RETURNS TABLE (outcome quick.outcome, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(extend_lease.item_id IS NULL, 'item_id', 'quick.extend_lease');
    PERFORM quick.check_not_null(extend_lease.lease_id IS NULL, 'lease_id', 'quick.extend_lease');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.extend_lease', false,
                                 (SELECT l.max_item_lease FROM quick.limits l), 'max_item_lease');
    -- Never earlier than the lease ends now: an extension never shortens a lease. Only
    -- vesting_time changes, not the item's place in its zone (zone_time).
    UPDATE quick.items i SET vesting_time = greatest(i.vesting_time, statement_timestamp() + lease_duration)
     WHERE i.id = extend_lease.item_id AND i.lease_id = extend_lease.lease_id
    RETURNING 'done'::quick.outcome, i.vesting_time INTO outcome, lease_expires_at;
    IF NOT FOUND THEN
        outcome := quick.item_miss_reason(extend_lease.item_id);
    END IF;
    RETURN NEXT;
END
$$;
REVOKE ALL ON FUNCTION quick.extend_lease(bigint,uuid,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.extend_lease(bigint,uuid,interval) TO quick_consumer, quick_admin;
