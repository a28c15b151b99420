-- The tenant of this session's login when it is a tenant login (quick.tenant_logins), else NULL.
-- Keyed by session_user: inside a SECURITY DEFINER function current_user is the owner, and a
-- SET ROLE cannot change the login a session authenticated as.
CREATE OR REPLACE FUNCTION quick.login_tenant()
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT t.tenant FROM quick.tenant_logins t WHERE t.login = session_user
$$;
REVOKE ALL ON FUNCTION quick.login_tenant() FROM PUBLIC;

-- A tenant login may act for its own tenant only: raises insufficient_privilege (42501) naming
-- the login and its tenant when `tenant` (or one of `tenants`) is another. Does nothing for other
-- logins.
CREATE OR REPLACE FUNCTION quick.check_tenant_login(tenants text[], caller text)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    own text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.tenant_logins) THEN
        RETURN;  -- no tenant logins at all: nothing to check (the usual case)
    END IF;
    own := quick.login_tenant();
    IF own IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(tenants) t WHERE t IS DISTINCT FROM own) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('%s: login %s may act for tenant %s only', caller, session_user, quote_literal(own));
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_tenant_login(text[],text) FROM PUBLIC;

-- Operations that act on items whatever their lease (a cancel: quick.complete without a lease id;
-- a forced requeue: quick.requeue without one) are the administrators': raises
-- insufficient_privilege unless the session's login is a member of quick_admin.
CREATE OR REPLACE FUNCTION quick.check_administrator(caller text, what text)
RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT pg_has_role(session_user, 'quick_admin', 'MEMBER') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('%s: %s is for quick_admin; %s is not a member', caller, what, session_user);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.check_administrator(text,text) FROM PUBLIC;
