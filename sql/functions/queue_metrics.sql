-- The database-level gauges of the Prometheus metrics (src/metrics/, docs/operations.md#metrics):
-- one row per value, (metric, tenant, value), tenant NULL for the database's own values. Its cost
-- is bounded by count_limit and top_tenants, not by the number of tenants or items:
--   * items, vested items, leased items: counted over every item when there are at most
--     count_limit; above that over a block sample (TABLESAMPLE SYSTEM) of about as many pages as
--     count_limit items take, scaled up by the fraction of the pages sampled
--     (quick.queue_metrics_sample); exact_items says which (1 or 0);
--   * zones (pointers) and dead items: exact up to count_limit, else estimated from a block
--     sample the same way (exact_zones, exact_dead_items);
--   * no estimate comes from the statistics counters (pg_stat_get_live_tuples): a crash restart,
--     a failover or pg_stat_reset zeroes them until the next VACUUM or ANALYZE;
--   * max pointer lag: the first entry of the pointers_vesting index that is not a paused
--     tenant's;
--   * oldest vested item age: the oldest vested item of the sample and of the zones of the
--     top_tenants oldest vested pointers (exact while the items are counted exactly), leaving out
--     paused tenants and paused job types: their items and pointers wait by design, and counting
--     them would set off the lag and age alerts during every pause;
--   * paused tenants and paused job types: how many rows quick.paused_tenants and
--     quick.paused_job_types hold (so that a forgotten pause is still seen);
--   * per tenant, for at most 2 x top_tenants tenants, the zone's depth (counted up to
--     count_limit) and its pointer lag (0 while the tenant is paused): the top_tenants zones with
--     the oldest vested pointers of tenants not paused (pointers_vesting) and the top_tenants
--     deepest zones of the sample, paused or not.
-- Database clock: ages and lags are seconds before statement_timestamp().
CREATE OR REPLACE FUNCTION quick.queue_metrics(top_tenants integer, count_limit integer)
RETURNS TABLE (metric text, tenant text, value double precision)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_now          timestamptz := statement_timestamp();
    v_count        bigint;
    v_exact        boolean;
    v_percent      double precision := 100;
    v_scale        double precision := 1;
    v_items        double precision;
    v_sampled      bigint;
    v_vested       bigint;
    v_leased       bigint;
    v_oldest       timestamptz;
    v_deepest      text[];
    v_oldest_zones text[];
    v_first_vested timestamptz;
    v_paused       bigint;  -- paused tenants
    v_paused_types text[];
BEGIN
    PERFORM quick.check_argument(top_tenants >= 0,
        'quick.queue_metrics: top_tenants must be zero or positive, got %s', coalesce(top_tenants::text, 'NULL'));
    PERFORM quick.check_argument(count_limit >= 1,
        'quick.queue_metrics: count_limit must be positive, got %s', coalesce(count_limit::text, 'NULL'));

    -- Pauses: small tables (one row per paused tenant or job type). While none is paused, the
    -- probes below are skipped.
    SELECT count(*) INTO v_paused FROM quick.paused_tenants;
    v_paused_types := ARRAY(SELECT j.job_type FROM quick.paused_job_types j);

    -- Items: all of them, or a sample when there are more than count_limit.
    SELECT c.counted, c.percent INTO v_count, v_percent FROM quick.queue_metrics_sample('quick.items', count_limit) c;
    v_exact := v_count <= count_limit;
    WITH sample AS MATERIALIZED (
        SELECT i.tenant, i.vesting_time, i.lease_id,
               i.job_type = ANY (v_paused_types)
                   OR (v_paused > 0 AND EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = i.tenant))
                   AS paused
          FROM quick.items i TABLESAMPLE SYSTEM (v_percent)
    ), deepest AS (
        SELECT s.tenant FROM sample s GROUP BY s.tenant ORDER BY count(*) DESC, s.tenant LIMIT top_tenants
    )
    SELECT count(*),
           count(*) FILTER (WHERE s.vesting_time <= v_now),
           count(*) FILTER (WHERE s.lease_id IS NOT NULL AND s.vesting_time > v_now),
           min(s.vesting_time) FILTER (WHERE s.vesting_time <= v_now AND NOT s.paused),
           (SELECT array_agg(d.tenant) FROM deepest d)
      INTO v_sampled, v_vested, v_leased, v_oldest, v_deepest
      FROM sample s;
    IF v_exact THEN
        v_items := v_sampled;
    ELSE
        v_items := round(greatest(v_sampled * 100.0 / v_percent, v_count));
        v_scale := v_items / greatest(v_sampled, 1);
    END IF;

    -- The oldest vested pointers of tenants not paused, from the pointers_vesting index.
    SELECT p.vesting_time INTO v_first_vested FROM quick.pointers p
     WHERE p.vesting_time <= v_now
       AND (v_paused = 0 OR NOT EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = p.tenant))
     ORDER BY p.vesting_time, p.tenant
     LIMIT 1;
    SELECT array_agg(p.tenant ORDER BY p.vesting_time, p.tenant) INTO v_oldest_zones
      FROM (SELECT p.tenant, p.vesting_time FROM quick.pointers p
             WHERE p.vesting_time <= v_now
               AND (v_paused = 0 OR NOT EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = p.tenant))
             ORDER BY p.vesting_time, p.tenant
             LIMIT top_tenants) p;
    -- A zone's first vested item may be older than its pointer's vesting time (a pull not yet
    -- applied), and need not be in the sample.
    SELECT least(v_oldest, min(z.first_vested)) INTO v_oldest
      FROM unnest(coalesce(v_oldest_zones, '{}')) t(tenant),
           LATERAL (SELECT min(i.vesting_time) AS first_vested
                      FROM (SELECT i.vesting_time FROM quick.items i
                             WHERE i.tenant = t.tenant AND i.zone_time <= v_now AND i.vesting_time <= v_now
                               AND NOT (i.job_type = ANY (v_paused_types))
                             LIMIT count_limit) i) z;

    RETURN QUERY VALUES
        ('items', NULL::text, v_items),
        ('vested_items', NULL, round(v_vested * v_scale)),
        ('leased_items', NULL, round(v_leased * v_scale)),
        ('exact_items', NULL, CASE WHEN v_exact THEN 1 ELSE 0 END),
        ('oldest_vested_item_age_seconds', NULL,
            coalesce(extract(epoch FROM greatest(v_now - v_oldest, interval '0')), 0)::double precision),
        ('max_pointer_lag_seconds', NULL,
            coalesce(extract(epoch FROM greatest(v_now - v_first_vested, interval '0')), 0)::double precision),
        ('paused_tenants', NULL, v_paused::double precision),
        ('paused_job_types', NULL, cardinality(v_paused_types)::double precision);

    -- Zones and dead items: exact up to count_limit, else estimated from a block sample.
    SELECT c.counted, c.percent INTO v_count, v_percent FROM quick.queue_metrics_sample('quick.pointers', count_limit) c;
    IF v_count > count_limit THEN
        SELECT count(*) INTO v_sampled FROM quick.pointers p TABLESAMPLE SYSTEM (v_percent);
    END IF;
    RETURN QUERY VALUES
        ('zones', NULL::text, CASE WHEN v_count <= count_limit THEN v_count
             ELSE round(greatest(v_sampled * 100.0 / v_percent, v_count)) END::double precision),
        ('exact_zones', NULL, CASE WHEN v_count <= count_limit THEN 1 ELSE 0 END);
    SELECT c.counted, c.percent INTO v_count, v_percent FROM quick.queue_metrics_sample('quick.dead_items', count_limit) c;
    IF v_count > count_limit THEN
        SELECT count(*) INTO v_sampled FROM quick.dead_items d TABLESAMPLE SYSTEM (v_percent);
    END IF;
    RETURN QUERY VALUES
        ('dead_items', NULL::text, CASE WHEN v_count <= count_limit THEN v_count
             ELSE round(greatest(v_sampled * 100.0 / v_percent, v_count)) END::double precision),
        ('exact_dead_items', NULL, CASE WHEN v_count <= count_limit THEN 1 ELSE 0 END);

    -- Per tenant: only the few zones chosen above, so that the series stay bounded.
    RETURN QUERY
    WITH chosen AS (
        SELECT DISTINCT c.tenant FROM unnest(coalesce(v_deepest, '{}') || coalesce(v_oldest_zones, '{}')) c(tenant)
    )
    SELECT m.metric, c.tenant, m.value
      FROM chosen c
      LEFT JOIN quick.pointers p ON p.tenant = c.tenant
      CROSS JOIN LATERAL (VALUES
          ('tenant_items',
           (SELECT count(*) FROM (SELECT 1 FROM quick.items i WHERE i.tenant = c.tenant LIMIT count_limit) n)
               ::double precision),
          ('tenant_pointer_lag_seconds',
           CASE WHEN v_paused > 0 AND EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = c.tenant) THEN 0
                ELSE coalesce(extract(epoch FROM greatest(v_now - p.vesting_time, interval '0')), 0)
           END::double precision)
      ) m(metric, value);
END
$$;
REVOKE ALL ON FUNCTION quick.queue_metrics(integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.queue_metrics(integer, integer) TO quick_consumer, quick_admin;
