-- Dashboard: the `max_rows` zones whose pointers have waited longest for a consumer (the oldest
-- vested pointers), read in order from the pointers_vesting index, so the cost does not grow with
-- the number of tenants. Each zone's counts read at most `count_cap` of its rows
-- (quick.dashboard_zone_counts).
CREATE OR REPLACE FUNCTION quick.dashboard_lagging_zones(max_rows integer DEFAULT 10, count_cap integer DEFAULT 100000)
RETURNS TABLE (tenant text, pointer_lag_seconds double precision, pointer_leased boolean, items bigint, vested bigint,
               failing bigint, oldest_item_age_seconds double precision, capped boolean)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
BEGIN
    PERFORM quick.check_argument(max_rows BETWEEN 0 AND 1000,
        'quick.dashboard_lagging_zones: max_rows must be between 0 and 1000, got %s', coalesce(max_rows::text, 'NULL'));
    PERFORM quick.check_argument(count_cap > 0,
        'quick.dashboard_lagging_zones: count_cap must be positive, got %s', coalesce(count_cap::text, 'NULL'));
    RETURN QUERY
    WITH oldest AS (
        SELECT p.tenant, p.vesting_time
          FROM quick.pointers p
         WHERE p.vesting_time <= now_ts
         ORDER BY p.vesting_time, p.tenant
         LIMIT max_rows
    )
    SELECT o.tenant, greatest(extract(epoch FROM now_ts - o.vesting_time), 0)::double precision,
           (SELECT p.lease_id IS NOT NULL FROM quick.pointers p WHERE p.tenant = o.tenant),
           z.items, z.vested, z.failing, z.oldest_item_age_seconds, z.capped
      FROM oldest o CROSS JOIN LATERAL quick.dashboard_zone_counts(o.tenant, count_cap, now_ts) z
     ORDER BY o.vesting_time, o.tenant;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_lagging_zones(integer,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dashboard_lagging_zones(integer,integer) TO quick_consumer, quick_admin;
