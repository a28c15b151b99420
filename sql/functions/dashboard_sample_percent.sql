-- Dashboard helper: the TABLESAMPLE SYSTEM percentage that reads about `page_budget` pages of
-- `relation`: 100 (every page, so exact counts) while the table is that small, less beyond, so
-- that the dashboard's aggregates cost the same with a million tenants as with ten
-- (docs/operations.md#dashboard). Executable by its owner only, through the dashboard functions.
CREATE OR REPLACE FUNCTION quick.dashboard_sample_percent(relation regclass, page_budget integer)
RETURNS double precision
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    pages bigint := pg_catalog.pg_relation_size(relation) / pg_catalog.current_setting('block_size')::bigint;
BEGIN
    PERFORM quick.check_argument(page_budget > 0,
        'quick.dashboard_sample_percent: page_budget must be positive, got %s', coalesce(page_budget::text, 'NULL'));
    IF pages <= page_budget THEN
        RETURN 100;
    END IF;
    RETURN 100.0 * page_budget / pages;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_sample_percent(regclass,integer) FROM PUBLIC;
