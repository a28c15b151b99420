-- What a producer may learn about items it enqueued, by id, without their payloads: queued
-- (vested, waiting for a consumer), delayed, leased (a consumer runs it), dead (in
-- quick.dead_items: failed, or cancelled by quick.cancel_item, which moves the item there) or
-- gone (completed, deleted, purged from the dead items, or never existed). A tenant login
-- (quick.tenant_logins) learns about its own tenant's items only; any other id reads as gone.
CREATE OR REPLACE FUNCTION quick.item_status(item_ids bigint[])
RETURNS TABLE (item_id bigint, state text, vesting_time timestamptz, error_count integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    login_tenant text := quick.login_tenant();
BEGIN
    PERFORM quick.check_not_null(item_ids IS NULL, 'item_ids', 'quick.item_status');
    PERFORM quick.check_argument(cardinality(item_ids) <= 10000,
        'quick.item_status: at most 10000 item_ids at a time, got %s', cardinality(item_ids)::text);
    RETURN QUERY
    SELECT u.id,
           CASE WHEN i.id IS NOT NULL AND i.lease_id IS NOT NULL AND i.vesting_time > statement_timestamp() THEN 'leased'
                WHEN i.id IS NOT NULL AND i.vesting_time > statement_timestamp() THEN 'delayed'
                WHEN i.id IS NOT NULL THEN 'queued'
                WHEN d.id IS NOT NULL THEN 'dead'
                ELSE 'gone' END,
           coalesce(i.vesting_time, d.died_at),
           coalesce(i.error_count, d.error_count)
      FROM unnest(item_ids) WITH ORDINALITY u(id, n)
      LEFT JOIN quick.items i ON i.id = u.id AND (login_tenant IS NULL OR i.tenant = login_tenant)
      LEFT JOIN quick.dead_items d ON d.id = u.id AND (login_tenant IS NULL OR d.tenant = login_tenant)
     ORDER BY u.n;
END
$$;
REVOKE ALL ON FUNCTION quick.item_status(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.item_status(bigint[]) TO quick_producer, quick_consumer, quick_admin;
