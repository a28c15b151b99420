-- Put every dead item that matches a filter (quick.matching_dead_items) back in its zone, each
-- through quick.enqueue (so every zone gets its pointer) with a fresh error count, as
-- quick.retry_dead_item does for one. All or nothing, in the caller's transaction. Returns how
-- many were retried. An item whose client item id is queued again meanwhile is not duplicated:
-- quick.enqueue returns the queued one, and the dead item is still removed.
CREATE OR REPLACE FUNCTION quick.retry_dead_items(tenant text DEFAULT NULL, job_type text DEFAULT NULL,
                                                  error_contains text DEFAULT NULL, older_than interval DEFAULT NULL,
                                                  ids bigint[] DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    -- Read first, so the filter's arguments are checked even when no dead item exists.
    matched bigint[] := ARRAY(SELECT m.id FROM quick.matching_dead_items(retry_dead_items.tenant, retry_dead_items.job_type,
                                                                        error_contains, older_than, ids, NULL,
                                                                        'quick.retry_dead_items') m(id));
    dead quick.dead_items;
    retried bigint := 0;
BEGIN
    -- Zone by zone, in tenant order, so that two concurrent retries take pointers in one order.
    FOR dead IN
        WITH taken AS (
            DELETE FROM quick.dead_items d WHERE d.id = ANY (matched) RETURNING d.*)
        SELECT t.* FROM taken t ORDER BY t.tenant, t.id
    LOOP
        PERFORM quick.enqueue(dead.tenant, dead.job_type, dead.payload, interval '0', dead.priority,
                              dead.client_item_id);
        retried := retried + 1;
    END LOOP;
    RETURN retried;
END
$$;
REVOKE ALL ON FUNCTION quick.retry_dead_items(text,text,text,interval,bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.retry_dead_items(text,text,text,interval,bigint[]) TO quick_admin;
