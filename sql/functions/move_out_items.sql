-- A tenant move, at its source: the tenant's items among `ids` (from quick.move_out_ids), in zone
-- order, as a JSON array in the form quick.move_in_items takes. Call after quick.move_out_begin,
-- in its transaction.
CREATE OR REPLACE FUNCTION quick.move_out_items(tenant text, ids bigint[])
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    batch jsonb;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_items');
    PERFORM quick.check_move_read_committed('quick.move_out_items');
    PERFORM quick.check_not_null(ids IS NULL, 'ids', 'quick.move_out_items');
    SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.priority, x.zone_time, x.id), '[]') INTO batch
      FROM (SELECT i.id, i.job_type, i.priority, i.vesting_time, i.zone_time, i.lease_id, i.error_count, i.payload,
                   i.enqueued_at, i.client_item_id, i.last_error
              FROM quick.items i
             WHERE i.id = ANY (ids) AND i.tenant = tenant) x;
    RETURN batch;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_items(text,bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_items(text,bigint[]) TO quick_admin;
