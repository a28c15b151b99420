-- Vested pointers in vesting order, read from the pointers_vesting index only.
CREATE OR REPLACE FUNCTION quick.peek_pointers(max_pointers integer)
RETURNS TABLE (tenant text, vesting_time timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_argument(max_pointers >= 0,
        'quick.peek_pointers: max_pointers must be zero or positive, got %s', coalesce(max_pointers::text, 'NULL'));
    RETURN QUERY
    SELECT p.tenant, p.vesting_time FROM quick.pointers p
     WHERE p.vesting_time <= statement_timestamp()
     ORDER BY p.vesting_time, p.tenant
     LIMIT max_pointers;
END
$$;
REVOKE ALL ON FUNCTION quick.peek_pointers(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.peek_pointers(integer) TO quick_consumer, quick_admin;
