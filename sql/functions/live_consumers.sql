-- The consumers of this database whose membership lease is live (the roles 'member:<id>' in
-- quick.consumer_roles), by id. Also forgets memberships that ran out an hour ago: consumers that
-- died without a clean stop, whose rows would otherwise stay forever.
CREATE OR REPLACE FUNCTION quick.live_consumers()
RETURNS TABLE (holder text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    DELETE FROM quick.consumer_roles r
     WHERE r.role LIKE 'member:%' AND r.expires_at < statement_timestamp() - interval '1 hour';
    RETURN QUERY
    SELECT r.holder FROM quick.consumer_roles r
     WHERE r.role LIKE 'member:%' AND r.expires_at > statement_timestamp()
     ORDER BY r.holder;
END
$$;
REVOKE ALL ON FUNCTION quick.live_consumers() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.live_consumers() TO quick_consumer, quick_admin;
