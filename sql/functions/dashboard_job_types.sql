-- Dashboard: one row per job type with queued or dead items: counts from a scan of at most about
-- `page_budget` pages of quick.items and of quick.dead_items (quick.dashboard_sample_percent),
-- exact while the tables are that small, scaled-up estimates beyond (`estimated`). The page
-- turns successive rows into rates.
CREATE OR REPLACE FUNCTION quick.dashboard_job_types(page_budget integer DEFAULT 2048)
RETURNS TABLE (job_type text, items bigint, vested bigint, leased bigint, failing bigint, dead bigint,
               max_error_count integer, oldest_item_age_seconds double precision, estimated boolean)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
    items_percent double precision := quick.dashboard_sample_percent('quick.items', page_budget);
    dead_percent double precision := quick.dashboard_sample_percent('quick.dead_items', page_budget);
BEGIN
    RETURN QUERY
    WITH queued AS (
        SELECT i.job_type,
               round(count(*) * 100 / items_percent)::bigint AS items,
               round(count(*) FILTER (WHERE i.vesting_time <= now_ts) * 100 / items_percent)::bigint AS vested,
               round(count(*) FILTER (WHERE i.lease_id IS NOT NULL AND i.vesting_time > now_ts) * 100
                     / items_percent)::bigint AS leased,
               round(count(*) FILTER (WHERE i.error_count > 0) * 100 / items_percent)::bigint AS failing,
               max(i.error_count) AS max_error_count,
               extract(epoch FROM now_ts - min(i.enqueued_at))::double precision AS oldest
          FROM quick.items i TABLESAMPLE SYSTEM (items_percent)
         GROUP BY i.job_type
    ), dead AS (
        SELECT d.job_type, round(count(*) * 100 / dead_percent)::bigint AS dead
          FROM quick.dead_items d TABLESAMPLE SYSTEM (dead_percent)
         GROUP BY d.job_type
    )
    SELECT coalesce(q.job_type, d.job_type), coalesce(q.items, 0), coalesce(q.vested, 0), coalesce(q.leased, 0),
           coalesce(q.failing, 0), coalesce(d.dead, 0), coalesce(q.max_error_count, 0), q.oldest,
           least(items_percent, dead_percent) < 100
      FROM queued q FULL JOIN dead d ON d.job_type = q.job_type
     ORDER BY 1;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_job_types(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dashboard_job_types(integer) TO quick_consumer, quick_admin;
