-- Dashboard: the whole queue in one row. Counts come from a scan of at most about `page_budget`
-- pages of each table (quick.dashboard_sample_percent): exact while the tables are that small,
-- scaled-up sample estimates beyond, with `estimated` true. The oldest vested pointer's lag reads
-- one entry of the pointers_vesting index. Unlike quick.queue_summary, never O(items).
CREATE OR REPLACE FUNCTION quick.dashboard_summary(page_budget integer DEFAULT 2048)
RETURNS TABLE (pointers bigint, vested_pointers bigint, leased_pointers bigint, items bigint, vested_items bigint,
               leased_items bigint, delayed_items bigint, failing_items bigint, dead_items bigint,
               max_pointer_lag_seconds double precision, estimated boolean, database_time timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
    items_percent double precision := quick.dashboard_sample_percent('quick.items', page_budget);
    pointers_percent double precision := quick.dashboard_sample_percent('quick.pointers', page_budget);
    dead_percent double precision := quick.dashboard_sample_percent('quick.dead_items', page_budget);
BEGIN
    RETURN QUERY
    WITH p AS (
        SELECT round(count(*) * 100 / pointers_percent)::bigint AS pointers,
               round(count(*) FILTER (WHERE p.vesting_time <= now_ts) * 100 / pointers_percent)::bigint AS vested,
               round(count(*) FILTER (WHERE p.lease_id IS NOT NULL AND p.vesting_time > now_ts) * 100
                     / pointers_percent)::bigint AS leased
          FROM quick.pointers p TABLESAMPLE SYSTEM (pointers_percent)
    ), i AS (
        SELECT round(count(*) * 100 / items_percent)::bigint AS items,
               round(count(*) FILTER (WHERE i.vesting_time <= now_ts) * 100 / items_percent)::bigint AS vested,
               round(count(*) FILTER (WHERE i.lease_id IS NOT NULL AND i.vesting_time > now_ts) * 100
                     / items_percent)::bigint AS leased,
               round(count(*) FILTER (WHERE i.lease_id IS NULL AND i.vesting_time > now_ts) * 100
                     / items_percent)::bigint AS delayed,
               round(count(*) FILTER (WHERE i.error_count > 0) * 100 / items_percent)::bigint AS failing
          FROM quick.items i TABLESAMPLE SYSTEM (items_percent)
    ), d AS (
        SELECT round(count(*) * 100 / dead_percent)::bigint AS dead
          FROM quick.dead_items d TABLESAMPLE SYSTEM (dead_percent)
    ), oldest_pointer AS (
        SELECT greatest(extract(epoch FROM now_ts - p.vesting_time), 0)::double precision AS seconds
          FROM quick.pointers p
         WHERE p.vesting_time <= now_ts
         ORDER BY p.vesting_time
         LIMIT 1
    )
    SELECT p.pointers, p.vested, p.leased, i.items, i.vested, i.leased, i.delayed, i.failing, d.dead,
           coalesce((SELECT o.seconds FROM oldest_pointer o), 0),
           least(items_percent, pointers_percent, dead_percent) < 100, now_ts
      FROM p, i, d;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_summary(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dashboard_summary(integer) TO quick_consumer, quick_admin;
