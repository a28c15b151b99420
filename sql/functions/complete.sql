-- Complete (delete) an item. With a lease id only the holder succeeds; without one it cancels the
-- item, which only quick_admin may do.
CREATE OR REPLACE FUNCTION quick.complete(item_id bigint, lease_id uuid DEFAULT NULL)
RETURNS quick.outcome
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(complete.item_id IS NULL, 'item_id', 'quick.complete');
    IF complete.lease_id IS NULL THEN
        PERFORM quick.check_administrator('quick.complete', 'cancelling an item (no lease_id)');
    END IF;
    DELETE FROM quick.items i
     WHERE i.id = complete.item_id
       AND (complete.lease_id IS NULL OR i.lease_id = complete.lease_id);
    IF FOUND THEN
        RETURN 'done';
    END IF;
    RETURN quick.item_miss_reason(complete.item_id);
END
$$;
REVOKE ALL ON FUNCTION quick.complete(bigint,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.complete(bigint,uuid) TO quick_consumer, quick_admin;
