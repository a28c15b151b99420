-- Dashboard: the consumers holding a live lease in quick.consumer_roles, one row each, with the
-- roles they hold: membership ('member:<consumer id>', renewed while the consumer runs) and the
-- in-order Scanner ('in_order_scanner'). Read-only: quick.live_consumers forgets the dead ones.
CREATE OR REPLACE FUNCTION quick.dashboard_consumers()
RETURNS TABLE (consumer_id text, member boolean, in_order_scanner boolean, roles text,
               lease_expires_in_seconds double precision, member_since timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
BEGIN
    RETURN QUERY
    SELECT r.holder,
           bool_or(r.role LIKE 'member:%'),
           bool_or(r.role = 'in_order_scanner'),
           string_agg(r.role, ', ' ORDER BY r.role),
           extract(epoch FROM max(r.expires_at) FILTER (WHERE r.role LIKE 'member:%') - now_ts)::double precision,
           min(r.acquired_at) FILTER (WHERE r.role LIKE 'member:%')
      FROM quick.consumer_roles r
     WHERE r.expires_at > now_ts
     GROUP BY r.holder
     ORDER BY r.holder;
END
$$;
REVOKE ALL ON FUNCTION quick.dashboard_consumers() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.dashboard_consumers() TO quick_consumer, quick_admin;
