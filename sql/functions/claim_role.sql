-- Claim or renew `role` for `holder`. Returns the holder after the call and its expiry: the
-- caller has the role iff the returned holder is itself.
CREATE OR REPLACE FUNCTION quick.claim_role(role text, holder text, lease_duration interval)
RETURNS TABLE (current_holder text, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    now_ts timestamptz := statement_timestamp();
BEGIN
    PERFORM quick.check_argument(length(claim_role.role) > 0, 'quick.claim_role: role must not be NULL or empty');
    PERFORM quick.check_argument(length(claim_role.holder) > 0, 'quick.claim_role: holder must not be NULL or empty');
    PERFORM quick.check_interval(lease_duration, 'lease_duration', 'quick.claim_role', false,
                                 (SELECT l.max_role_lease FROM quick.limits l), 'max_role_lease');
    RETURN QUERY
    INSERT INTO quick.consumer_roles AS r (role, holder, expires_at, acquired_at)
    VALUES (claim_role.role, claim_role.holder, now_ts + lease_duration, now_ts)
    ON CONFLICT (role) DO UPDATE
       SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
           acquired_at = CASE WHEN r.holder = EXCLUDED.holder THEN r.acquired_at ELSE EXCLUDED.acquired_at END
     WHERE r.holder = EXCLUDED.holder OR r.expires_at <= now_ts
    RETURNING r.holder, r.expires_at;
    IF NOT FOUND THEN
        RETURN QUERY SELECT r.holder, r.expires_at FROM quick.consumer_roles r WHERE r.role = claim_role.role;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.claim_role(text,text,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.claim_role(text,text,interval) TO quick_consumer, quick_admin;
