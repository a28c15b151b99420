-- A tenant move, at its source: the tenant's dead items among `ids` (from quick.move_out_ids), as
-- a JSON array in the form quick.move_in_dead_items takes. Call after quick.move_out_begin, in its
-- transaction.
CREATE OR REPLACE FUNCTION quick.move_out_dead_items(tenant text, ids bigint[])
RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    batch jsonb;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_out_dead_items');
    PERFORM quick.check_move_read_committed('quick.move_out_dead_items');
    PERFORM quick.check_not_null(ids IS NULL, 'ids', 'quick.move_out_dead_items');
    SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id), '[]') INTO batch
      FROM (SELECT d.id, d.job_type, d.priority, d.error_count, d.payload, d.enqueued_at, d.client_item_id,
                   d.last_error, d.died_at, d.reason
              FROM quick.dead_items d
             WHERE d.id = ANY (ids) AND d.tenant = tenant) x;
    RETURN batch;
END
$$;
REVOKE ALL ON FUNCTION quick.move_out_dead_items(text,bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_out_dead_items(text,bigint[]) TO quick_admin;
