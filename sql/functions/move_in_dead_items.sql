-- A tenant move, at its destination: inserts a batch of quick.move_out_dead_items as the tenant's
-- dead items, with new ids (drawn from the items' sequence, as a dead item's id is the id it had as
-- an item). Returns the number inserted. Call after quick.move_in_begin, in its transaction.
CREATE OR REPLACE FUNCTION quick.move_in_dead_items(tenant text, dead_items jsonb)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    inserted integer;
BEGIN
    PERFORM quick.check_movable_tenant(tenant, 'quick.move_in_dead_items');
    PERFORM quick.check_move_read_committed('quick.move_in_dead_items');
    PERFORM quick.check_argument(coalesce(jsonb_typeof(dead_items) = 'array', false),
        'quick.move_in_dead_items: dead_items must be a JSON array from quick.move_out_dead_items');
    INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, client_item_id,
                                  last_error, died_at, reason)
    SELECT nextval('quick.items_id_seq'), tenant, x.job_type, x.priority, x.error_count, x.payload, x.enqueued_at,
           x.client_item_id, x.last_error, x.died_at, x.reason
      FROM jsonb_to_recordset(dead_items) AS x(job_type text, priority integer, error_count integer, payload jsonb,
                                               enqueued_at timestamptz, client_item_id text, last_error text,
                                               died_at timestamptz, reason text);
    GET DIAGNOSTICS inserted = ROW_COUNT;
    RETURN inserted;
END
$$;
REVOKE ALL ON FUNCTION quick.move_in_dead_items(text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.move_in_dead_items(text,jsonb) TO quick_admin;
