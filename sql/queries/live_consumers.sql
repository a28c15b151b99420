-- The consumers of this database whose membership lease is live (the roles 'member:<id>' in
-- quick.consumer_roles), by id. Also forgets memberships that ran out an hour ago: consumers that
-- died without a clean stop, whose rows would otherwise stay forever.
WITH forgotten AS (
    DELETE FROM quick.consumer_roles
     WHERE role LIKE 'member:%' AND expires_at < statement_timestamp() - interval '1 hour')
SELECT holder FROM quick.consumer_roles
 WHERE role LIKE 'member:%' AND expires_at > statement_timestamp()
 ORDER BY holder
