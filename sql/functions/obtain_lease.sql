-- Take a lease on one item unless another live lease holds it.
CREATE OR REPLACE FUNCTION quick.obtain_lease(item_id bigint, lease_duration interval)
RETURNS TABLE (outcome quick.outcome, lease_id uuid, lease_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_positive_interval(lease_duration, 'lease_duration', 'quick.obtain_lease');
    UPDATE quick.items i
       SET lease_id = gen_random_uuid(), vesting_time = statement_timestamp() + lease_duration
     WHERE i.id = obtain_lease.item_id
       AND (i.lease_id IS NULL OR i.vesting_time <= statement_timestamp())
    RETURNING 'done'::quick.outcome, i.lease_id, i.vesting_time
         INTO outcome, lease_id, lease_expires_at;
    IF NOT FOUND THEN
        outcome := CASE WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = obtain_lease.item_id)
                        THEN 'lease_lost' ELSE 'item_gone' END;
    END IF;
    RETURN NEXT;
END
$$;
