-- A tenant move, at its source: the next `max_items` of the tenant's items in zone order
-- (priority, vesting_time, id), after `after` (the last element of the previous batch; NULL for
-- the first), as a JSON array in the form quick.move_in_items takes. Call after
-- quick.move_out_begin, in its transaction: the rows are locked, so the batches do not change.
CREATE OR REPLACE FUNCTION quick.move_out_items(tenant text, after jsonb, max_items integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    batch jsonb;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_items');
    PERFORM quick.check_argument(coalesce(max_items BETWEEN 1 AND 100000, false),
        'quick.move_out_items: max_items must be between 1 and 100000, got %s', coalesce(max_items::text, 'NULL'));
    SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.priority, x.vesting_time, x.id), '[]') INTO batch
      FROM (SELECT i.id, i.job_type, i.priority, i.vesting_time, i.lease_id, i.error_count, i.payload,
                   i.enqueued_at, i.client_item_id, i.last_error
              FROM quick.items i
             WHERE i.tenant = tenant
               AND (after IS NULL
                    OR (i.priority, i.vesting_time, i.id)
                       > ((after->>'priority')::integer, (after->>'vesting_time')::timestamptz, (after->>'id')::bigint))
             ORDER BY i.priority, i.vesting_time, i.id
             LIMIT max_items) x;
    RETURN batch;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_items(text,jsonb,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_items(text,jsonb,integer) TO quick_admin;
