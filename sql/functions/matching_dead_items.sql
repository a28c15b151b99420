-- The ids of the dead items that match a filter, newest first: the one definition of the filter
-- that quick.find_dead_items, quick.retry_dead_items and quick.purge_dead_items share. Every
-- condition is optional (NULL matches everything):
--   tenant, job_type  equal;
--   error_contains    a case-insensitive substring of the item's last error or of the reason it
--                     died for ('cancelled', 'permanent failure', ...), taken literally (no
--                     pattern characters);
--   older_than        died at least this long ago;
--   ids               one of these ids.
-- max_rows NULL: all of them. Checks its arguments with `caller`'s name in the messages.
CREATE OR REPLACE FUNCTION quick.matching_dead_items(tenant text, job_type text, error_contains text,
                                                     older_than interval, ids bigint[], max_rows integer,
                                                     caller text)
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM quick.check_argument(older_than IS NULL OR older_than >= interval '0',
        '%s: older_than must not be negative, got %s', caller, older_than::text);
    PERFORM quick.check_argument(max_rows IS NULL OR max_rows > 0,
        '%s: max_rows must be positive, got %s', caller, max_rows::text);
    PERFORM quick.check_argument(error_contains IS NULL OR length(error_contains) > 0,
        '%s: error_contains must not be empty (NULL matches every error)', caller);
    PERFORM quick.check_argument(ids IS NULL OR cardinality(ids) <= 100000,
        '%s: at most 100000 ids at a time, got %s', caller, cardinality(ids)::text);
    -- quick.find_dead_items names its filter arguments tenant_filter and job_type_filter.
    PERFORM quick.check_not_empty(tenant, CASE WHEN caller = 'quick.find_dead_items' THEN 'tenant_filter' ELSE 'tenant' END,
                                  caller, 'matches every tenant');
    PERFORM quick.check_not_empty(job_type,
                                  CASE WHEN caller = 'quick.find_dead_items' THEN 'job_type_filter' ELSE 'job_type' END,
                                  caller, 'matches every job type');
    RETURN QUERY
    SELECT d.id FROM quick.dead_items d
     WHERE (matching_dead_items.tenant IS NULL OR d.tenant = matching_dead_items.tenant)
       AND (matching_dead_items.job_type IS NULL OR d.job_type = matching_dead_items.job_type)
       AND (error_contains IS NULL
            OR strpos(lower(coalesce(d.last_error, '') || E'\n' || d.reason), lower(error_contains)) > 0)
       AND (older_than IS NULL OR d.died_at <= statement_timestamp() - older_than)
       AND (ids IS NULL OR d.id = ANY (ids))
     ORDER BY d.died_at DESC, d.id DESC
     LIMIT max_rows;
END
$$;
REVOKE ALL ON FUNCTION quick.matching_dead_items(text,text,text,interval,bigint[],integer,text) FROM PUBLIC;
