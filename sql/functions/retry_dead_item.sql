-- Put a dead item back in its zone (through quick.enqueue, so the zone gets its pointer), with a
-- fresh error count. Returns the new item id. Runs inside the caller's transaction.
CREATE OR REPLACE FUNCTION quick.retry_dead_item(dead_item_id bigint, vesting_delay interval DEFAULT '0')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    dead quick.dead_items;
    new_id bigint;
BEGIN
    PERFORM quick.check_not_null(dead_item_id IS NULL, 'dead_item_id', 'quick.retry_dead_item');
    PERFORM quick.check_interval(vesting_delay, 'vesting_delay', 'quick.retry_dead_item', true,
                                 (SELECT l.max_vesting_delay FROM quick.limits l), 'max_vesting_delay');
    DELETE FROM quick.dead_items d WHERE d.id = dead_item_id RETURNING * INTO dead;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('quick.retry_dead_item: no dead item with id %s', coalesce(dead_item_id::text, 'NULL'));
    END IF;
    SELECT e.item_id INTO new_id
      FROM quick.enqueue(dead.tenant, dead.job_type, dead.payload, vesting_delay, dead.priority,
                         dead.client_item_id) e;
    RETURN new_id;
END
$$;
REVOKE ALL ON FUNCTION quick.retry_dead_item(bigint,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.retry_dead_item(bigint,interval) TO quick_admin;
