-- Vested items of one zone in (priority, zone_time) order, optionally of one job type.
CREATE OR REPLACE FUNCTION quick.peek(tenant text, max_items integer DEFAULT 1, job_type text DEFAULT NULL)
RETURNS SETOF quick.items
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_not_null(peek.tenant IS NULL, 'tenant', 'quick.peek');
    PERFORM quick.check_not_empty(peek.tenant, 'tenant', 'quick.peek');
    PERFORM quick.check_not_empty(peek.job_type, 'job_type', 'quick.peek', 'takes every job type');
    PERFORM quick.check_argument(peek.max_items > 0,
        'quick.peek: max_items must be positive, got %s', coalesce(peek.max_items::text, 'NULL'));
    RETURN QUERY
    SELECT * FROM quick.items i
     WHERE i.tenant = peek.tenant AND i.zone_time <= statement_timestamp()
       AND i.vesting_time <= statement_timestamp()
       AND (peek.job_type IS NULL OR i.job_type = peek.job_type)
     ORDER BY i.priority, i.zone_time
     LIMIT peek.max_items;
END
$$;
REVOKE ALL ON FUNCTION quick.peek(text,integer,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.peek(text,integer,text) TO quick_consumer, quick_admin;
