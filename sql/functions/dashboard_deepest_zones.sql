-- Dashboard: the `max_rows` deepest queue zones. The ranking comes from a scan of at most about
-- `page_budget` pages of quick.items (quick.dashboard_sample_percent: exact while the table is
-- that small, a sample beyond, `estimated`); the counts of each zone listed are then read from its
-- rows, at most `count_cap` per zone (quick.dashboard_zone_counts).
CREATE OR REPLACE FUNCTION quick.dashboard_deepest_zones(max_rows integer DEFAULT 10, page_budget integer DEFAULT 2048,
                                                         count_cap integer DEFAULT 100000)
RETURNS TABLE (tenant text, items bigint, vested bigint, leased bigint, failing bigint,
               oldest_item_age_seconds double precision, pointer_lag_seconds double precision, capped boolean,
               estimated boolean)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
    items_percent double precision := quick.dashboard_sample_percent('quick.items', page_budget);
BEGIN
    PERFORM quick.check_argument(max_rows BETWEEN 0 AND 1000,
        'quick.dashboard_deepest_zones: max_rows must be between 0 and 1000, got %s', coalesce(max_rows::text, 'NULL'));
    PERFORM quick.check_argument(count_cap > 0,
        'quick.dashboard_deepest_zones: count_cap must be positive, got %s', coalesce(count_cap::text, 'NULL'));
    RETURN QUERY
    WITH ranked AS (
        SELECT i.tenant
          FROM quick.items i TABLESAMPLE SYSTEM (items_percent)
         GROUP BY i.tenant
         ORDER BY count(*) DESC, i.tenant
         LIMIT max_rows
    )
    SELECT r.tenant, z.items, z.vested, z.leased, z.failing, z.oldest_item_age_seconds,
           (SELECT greatest(extract(epoch FROM now_ts - p.vesting_time), 0)::double precision
              FROM quick.pointers p WHERE p.tenant = r.tenant AND p.vesting_time <= now_ts),
           z.capped, items_percent < 100
      FROM ranked r CROSS JOIN LATERAL quick.dashboard_zone_counts(r.tenant, count_cap, now_ts) z
     ORDER BY z.items DESC, r.tenant;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_deepest_zones(integer,integer,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dashboard_deepest_zones(integer,integer,integer) TO quick_consumer, quick_admin;
