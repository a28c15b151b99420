-- Delete every dead item that matches a filter (quick.matching_dead_items), at once. Returns how
-- many were deleted.
CREATE OR REPLACE FUNCTION quick.purge_dead_items(tenant text DEFAULT NULL, job_type text DEFAULT NULL,
                                                  error_contains text DEFAULT NULL, older_than interval DEFAULT NULL,
                                                  ids bigint[] DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    -- Read first, so the filter's arguments are checked even when no dead item exists.
    matched bigint[] := ARRAY(SELECT m.id FROM quick.matching_dead_items(purge_dead_items.tenant, purge_dead_items.job_type,
                                                                        error_contains, older_than, ids, NULL,
                                                                        'quick.purge_dead_items') m(id));
    purged bigint;
BEGIN
    DELETE FROM quick.dead_items d WHERE d.id = ANY (matched);
    GET DIAGNOSTICS purged = ROW_COUNT;
    RETURN purged;
END
$$;
REVOKE ALL ON FUNCTION quick.purge_dead_items(text,text,text,interval,bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.purge_dead_items(text,text,text,interval,bigint[]) TO quick_admin;
