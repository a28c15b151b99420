-- Cancel a queued item: it leaves its zone for quick.dead_items with the reason 'cancelled', from
-- where quick.retry_dead_item(s) can bring it back and quick.purge_dead_items delete it. Returns
-- false when there is no such item (completed, dead already, or never enqueued). A consumer
-- running it right now is not interrupted; its completion then finds the item gone. The zone's
-- pointer stays until a visit finds the zone empty: a cancel never breaks the invariant.
CREATE OR REPLACE FUNCTION quick.cancel_item(item_id bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    item quick.items;
BEGIN
    PERFORM quick.check_not_null(item_id IS NULL, 'item_id', 'quick.cancel_item');
    DELETE FROM quick.items i WHERE i.id = cancel_item.item_id RETURNING * INTO item;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at,
                                  client_item_id, last_error, reason)
    VALUES (item.id, item.tenant, item.job_type, item.priority, item.error_count, item.payload,
            item.enqueued_at, item.client_item_id, item.last_error, 'cancelled')
    ON CONFLICT (id) DO NOTHING;
    IF NOT FOUND THEN
        -- Only an id given explicitly at some point can collide; keep the item rather than lose it.
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('quick.cancel_item: dead item %s already exists; the item stays queued', item.id);
    END IF;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION quick.cancel_item(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.cancel_item(bigint) TO quick_admin;
