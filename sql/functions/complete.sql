-- Complete (delete) an item. With a lease id only the holder succeeds; without one it cancels.
CREATE OR REPLACE FUNCTION quick.complete(item_id bigint, lease_id uuid DEFAULT NULL)
RETURNS quick.outcome
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(complete.item_id IS NULL, 'item_id', 'quick.complete');
    DELETE FROM quick.items i
     WHERE i.id = complete.item_id
       AND (complete.lease_id IS NULL OR i.lease_id = complete.lease_id);
    IF FOUND THEN
        RETURN 'done';
    END IF;
    RETURN quick.item_miss_reason(complete.item_id);
END
$$;
