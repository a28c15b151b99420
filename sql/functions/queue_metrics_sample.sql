-- Metrics helper (quick.queue_metrics): counts the rows of `relation` up to count_limit + 1
-- (`counted`), and when it has more, the TABLESAMPLE SYSTEM percentage that reads about as many
-- of its pages as count_limit rows take (`percent`; 100 while the table has no more pages than
-- that). Rows per page come from the count itself (its rows over the pages it went through) or,
-- when larger, from pg_class (reltuples / relpages, as of the last VACUUM or ANALYZE); never
-- from the statistics counters (pg_stat_get_live_tuples), which a crash restart, a failover or
-- pg_stat_reset sets to zero and only a later VACUUM or ANALYZE brings back. The percentage is
-- of the table's pages now, so the sample reads at most as many pages as the count did, however
-- many rows the table has and however bloated it is; scaling the sample up by 100 / percent
-- estimates its rows. Executable by its owner only, through quick.queue_metrics.
CREATE OR REPLACE FUNCTION quick.queue_metrics_sample(relation regclass, count_limit integer,
                                                      OUT counted bigint, OUT percent double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    spanned bigint;            -- pages from the first to the last row counted
    pages   double precision;  -- the table's pages now
    density double precision;  -- rows per page
    budget  double precision;  -- pages the sample should read
BEGIN
    EXECUTE format('SELECT count(*), max(s.page) - min(s.page) + 1'
                   '  FROM (SELECT (r.ctid::text::point)[0] AS page FROM %s r LIMIT $1) s', relation)
       INTO counted, spanned USING count_limit::bigint + 1;
    percent := 100;
    IF counted <= count_limit THEN
        RETURN;
    END IF;
    SELECT CASE WHEN c.reltuples >= 0 AND c.relpages > 0 THEN c.reltuples / c.relpages END INTO density
      FROM pg_class c WHERE c.oid = relation;
    density := greatest(counted::double precision / greatest(spanned, 1), coalesce(density, 0), 1);
    budget := ceil(count_limit / density);
    pages := pg_relation_size(relation) / current_setting('block_size')::bigint;
    IF pages > budget THEN
        percent := 100.0 * budget / pages;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.queue_metrics_sample(regclass, integer) FROM PUBLIC;
