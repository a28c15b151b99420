-- Retention: delete up to max_rows dead items older than quick.limits.dead_item_max_age, oldest
-- first (index dead_items_died_at). Does nothing while that limit is NULL, the default (but
-- raises when quick.limits has no row at all: quick.current_limits). The consumer that holds the
-- in-order role calls it now and then; returns how many it deleted.
CREATE OR REPLACE FUNCTION quick.expire_dead_items(max_rows integer DEFAULT 10000)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    max_age interval := (quick.current_limits()).dead_item_max_age;  -- raises without quick.limits' row
    expired bigint;
BEGIN
    PERFORM quick.check_argument(max_rows > 0,
        'quick.expire_dead_items: max_rows must be positive, got %s', coalesce(max_rows::text, 'NULL'));
    IF max_age IS NULL THEN
        RETURN 0;
    END IF;
    DELETE FROM quick.dead_items d
     WHERE d.id IN (SELECT o.id FROM quick.dead_items o
                     WHERE o.died_at < statement_timestamp() - max_age
                     ORDER BY o.died_at LIMIT max_rows);
    GET DIAGNOSTICS expired = ROW_COUNT;
    RETURN expired;
END
$$;
REVOKE ALL ON FUNCTION quick.expire_dead_items(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.expire_dead_items(integer) TO quick_consumer, quick_admin;
