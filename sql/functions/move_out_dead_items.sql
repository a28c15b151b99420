-- A tenant move, at its source: the next `max_items` of the tenant's dead items by id, after
-- `after` (the last element of the previous batch; NULL for the first), as a JSON array in the
-- form quick.move_in_dead_items takes. Call after quick.move_out_begin, in its transaction.
CREATE OR REPLACE FUNCTION quick.move_out_dead_items(tenant text, after jsonb, max_items integer)
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    batch jsonb;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_dead_items');
    PERFORM quick.check_argument(coalesce(max_items BETWEEN 1 AND 100000, false),
        'quick.move_out_dead_items: max_items must be between 1 and 100000, got %s',
        coalesce(max_items::text, 'NULL'));
    SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id), '[]') INTO batch
      FROM (SELECT d.id, d.job_type, d.priority, d.error_count, d.payload, d.enqueued_at, d.client_item_id,
                   d.last_error, d.died_at, d.reason
              FROM quick.dead_items d
             WHERE d.tenant = tenant AND (after IS NULL OR d.id > (after->>'id')::bigint)
             ORDER BY d.id
             LIMIT max_items) x;
    RETURN batch;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_dead_items(text,jsonb,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_dead_items(text,jsonb,integer) TO quick_admin;
