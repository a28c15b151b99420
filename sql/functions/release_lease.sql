-- Give a lease back without counting an error (throttled items, a consumer that stops).
CREATE OR REPLACE FUNCTION quick.release_lease(item_id bigint, lease_id uuid, vesting_delay interval DEFAULT '0')
RETURNS quick.outcome
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    zone     text;
    vests_at timestamptz;
BEGIN
    PERFORM quick.check_argument(release_lease.vesting_delay >= interval '0',
        'quick.release_lease: vesting_delay must be zero or positive, got %s',
        coalesce(release_lease.vesting_delay::text, 'NULL'));
    PERFORM quick.check_argument(release_lease.lease_id IS NOT NULL, 'quick.release_lease: lease_id must not be NULL');
    UPDATE quick.items i
       SET vesting_time = statement_timestamp() + release_lease.vesting_delay, lease_id = NULL
     WHERE i.id = release_lease.item_id AND i.lease_id = release_lease.lease_id
    RETURNING i.tenant, i.vesting_time INTO zone, vests_at;
    IF FOUND THEN
        PERFORM quick.request_pointer_pulls(ARRAY[zone], ARRAY[vests_at]);
        RETURN 'done';
    END IF;
    RETURN quick.item_miss_reason(release_lease.item_id);
END
$$;
