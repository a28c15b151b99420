-- Dashboard helper: the counts of one queue zone at `now_ts`, read through the items_zone_order
-- index from at most `count_cap` of its rows, so that a zone of millions costs no more than
-- count_cap rows (`capped`: the zone has at least that many). Executable by its owner only,
-- through quick.dashboard_deepest_zones and quick.dashboard_lagging_zones.
CREATE OR REPLACE FUNCTION quick.dashboard_zone_counts(zone_tenant text, count_cap integer, now_ts timestamptz)
RETURNS TABLE (items bigint, vested bigint, leased bigint, failing bigint, oldest_item_age_seconds double precision,
               capped boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
SELECT count(*),
       count(*) FILTER (WHERE s.vesting_time <= now_ts),
       count(*) FILTER (WHERE s.lease_id IS NOT NULL AND s.vesting_time > now_ts),
       count(*) FILTER (WHERE s.error_count > 0),
       extract(epoch FROM now_ts - min(s.enqueued_at))::double precision,
       count(*) >= count_cap
  FROM (SELECT i.vesting_time, i.lease_id, i.error_count, i.enqueued_at
          FROM quick.items i WHERE i.tenant = zone_tenant LIMIT count_cap) s
$$;
REVOKE ALL ON FUNCTION quick.dashboard_zone_counts(text,integer,timestamptz) FROM PUBLIC;
