-- A tenant move, at its destination: inserts a batch of quick.move_out_items as the tenant's
-- items, each with everything it had (priority, vesting time, lease id, error count, last error,
-- enqueue time, job type, payload, client item id) but its id, which is drawn here. An item leased
-- at the source keeps its lease's vesting time, so it vests here when its lease would have run out
-- there: never run twice at once. An item whose client_item_id the tenant already uses here is
-- the same job: it is not inserted twice. Returns the number of items inserted. Call after
-- quick.move_in_begin, in its transaction.
CREATE OR REPLACE FUNCTION quick.move_in_items(tenant text, items jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    inserted integer;
BEGIN
    PERFORM quick.check_movable_tenant(move_in_items.tenant, 'quick.move_in_items');
    PERFORM quick.check_move_read_committed('quick.move_in_items');
    PERFORM quick.check_argument(coalesce(jsonb_typeof(move_in_items.items) = 'array', false),
        'quick.move_in_items: items must be a JSON array from quick.move_out_items');
    -- zone_time: the item's place in its zone where it was (an older source sends none: then its
    -- vesting time, which is where a leased item stood before schema version 12).
    INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, lease_id, error_count, payload,
                             enqueued_at, client_item_id, last_error)
    SELECT move_in_items.tenant, x.job_type, x.priority, x.vesting_time, least(coalesce(x.zone_time, x.vesting_time), x.vesting_time),
           x.lease_id, x.error_count, x.payload, x.enqueued_at, x.client_item_id, x.last_error
      FROM jsonb_to_recordset(move_in_items.items) AS x(job_type text, priority integer, vesting_time timestamptz,
                                          zone_time timestamptz, lease_id uuid,
                                          error_count integer, payload jsonb, enqueued_at timestamptz,
                                          client_item_id text, last_error text)
    ON CONFLICT (tenant, client_item_id) WHERE client_item_id IS NOT NULL DO NOTHING;
    GET DIAGNOSTICS inserted = ROW_COUNT;
    RETURN inserted;
END
$$;
REVOKE ALL ON FUNCTION quick.move_in_items(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_in_items(text,jsonb) TO quick_admin;
