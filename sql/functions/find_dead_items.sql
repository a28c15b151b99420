-- Search the dead items (quick.matching_dead_items describes the filter), newest first, at most
-- max_rows (1 to 1000) of them. For `quick dead list` and the dashboard. The filter's tenant and
-- job type are named tenant_filter and job_type_filter, since the result has columns tenant and
-- job_type.
CREATE OR REPLACE FUNCTION quick.find_dead_items(tenant_filter text DEFAULT NULL, job_type_filter text DEFAULT NULL,
                                                 error_contains text DEFAULT NULL, older_than interval DEFAULT NULL,
                                                 max_rows integer DEFAULT 100)
RETURNS TABLE (id bigint, tenant text, job_type text, priority integer, error_count integer, last_error text,
               reason text, died_at timestamptz, enqueued_at timestamptz, client_item_id text, payload jsonb)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    PERFORM quick.check_argument(max_rows BETWEEN 1 AND 1000,
        'quick.find_dead_items: max_rows must be between 1 and 1000, got %s', coalesce(max_rows::text, 'NULL'));
    RETURN QUERY
    SELECT d.id, d.tenant, d.job_type, d.priority, d.error_count, d.last_error, d.reason, d.died_at,
           d.enqueued_at, d.client_item_id, d.payload
      FROM quick.matching_dead_items(tenant_filter, job_type_filter, error_contains,
                                     older_than, NULL, max_rows, 'quick.find_dead_items') m(id)
      JOIN quick.dead_items d ON d.id = m.id
     ORDER BY d.died_at DESC, d.id DESC;
END
$$;
REVOKE ALL ON FUNCTION quick.find_dead_items(text,text,text,interval,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.find_dead_items(text,text,text,interval,integer) TO quick_admin;
