-- quick-pg schema version 6: least-privilege roles (docs/security.md).
--
--   quick_producer  enqueue (quick.enqueue, quick.enqueue_batch and the C++ fast paths) and read
--                   the state of items (quick.item_status); with tenant logins, its own tenant's
--                   items through SELECT as well
--   quick_consumer  everything a consumer and `quick worker` run
--   quick_admin     everything: migrations, the tables, cancel, dead-item replay, limits
--
-- An application's login is granted one of them (GRANT quick_producer TO app). Nobody else may
-- touch schema quick: PUBLIC loses every privilege on it. The tables are reached through the SQL
-- functions, which run as their owner (SECURITY DEFINER, search_path = pg_catalog, pg_temp); each
-- function's file in sql/functions/ says who may execute it.
--
-- The roles are cluster-wide. This migration creates them when they do not exist, which needs
-- the CREATEROLE privilege; an administrator who does not give the migrating login that privilege
-- creates them beforehand (docs/security.md, "Installing without CREATEROLE").
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 5) THEN
        RAISE EXCEPTION 'quick migration 0006 needs migration 0005 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 6) THEN
        RAISE EXCEPTION 'quick migration 0006 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

DO $roles$
DECLARE
    role_name text;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['quick_producer', 'quick_consumer', 'quick_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role_name) THEN
            IF NOT (SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user) THEN
                RAISE EXCEPTION 'quick migration 0006: role % does not exist and % may not create roles', role_name,
                                current_user
                    USING ERRCODE = 'insufficient_privilege',
                          HINT = 'Create the roles quick_producer, quick_consumer and quick_admin (NOLOGIN) as an '
                                 'administrator first, or migrate as a login with CREATEROLE (docs/security.md).';
            END IF;
            EXECUTE format('CREATE ROLE %I NOLOGIN', role_name);
        END IF;
    END LOOP;
END
$roles$;

-- Nobody but these roles reaches schema quick; functions created from now on (sql/functions/,
-- by the migrating login) are not executable by PUBLIC either.
REVOKE ALL ON SCHEMA quick FROM PUBLIC;
GRANT USAGE ON SCHEMA quick TO quick_producer, quick_consumer, quick_admin;
REVOKE ALL ON ALL TABLES IN SCHEMA quick FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA quick FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA quick FROM PUBLIC;
ALTER DEFAULT PRIVILEGES IN SCHEMA quick REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

-- Administrators may read and repair everything by hand, and change the limits.
GRANT ALL ON ALL TABLES IN SCHEMA quick TO quick_admin;
GRANT ALL ON ALL SEQUENCES IN SCHEMA quick TO quick_admin;
-- Every role may read which schema version a database is at (`quick worker` checks it).
GRANT SELECT ON quick.schema_migrations TO quick_producer, quick_consumer;

-- Tenant logins, for platforms that give each tenant its own database login: a login listed here
-- may enqueue for its own tenant only, and reads its own tenant's items and dead items with plain
-- SELECT (row-level security below). Off by default: with no rows, nothing changes. Maintained by
-- administrators (quick tenant commands or INSERT/DELETE).
CREATE TABLE quick.tenant_logins (
    login  name PRIMARY KEY,
    tenant text NOT NULL CHECK (length(tenant) BETWEEN 1 AND 200)
);
GRANT ALL ON quick.tenant_logins TO quick_admin;
-- A login sees its own mapping only (the policies below read it as the querying login).
ALTER TABLE quick.tenant_logins ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON quick.tenant_logins TO quick_producer;
CREATE POLICY administrators ON quick.tenant_logins TO quick_admin USING (true) WITH CHECK (true);
CREATE POLICY own_login ON quick.tenant_logins FOR SELECT TO quick_producer USING (login = session_user);

-- Row-level security: the functions run as the tables' owner, which policies do not restrict, so
-- these only govern direct SELECTs. A tenant login (through quick_producer) sees its own tenant's
-- rows; the administrators see everything; other producers see nothing (they have
-- quick.item_status).
ALTER TABLE quick.items ENABLE ROW LEVEL SECURITY;
ALTER TABLE quick.dead_items ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON quick.items, quick.dead_items TO quick_producer;
CREATE POLICY administrators ON quick.items TO quick_admin USING (true) WITH CHECK (true);
CREATE POLICY administrators ON quick.dead_items TO quick_admin USING (true) WITH CHECK (true);
CREATE POLICY own_tenant ON quick.items FOR SELECT TO quick_producer
    USING (tenant = (SELECT t.tenant FROM quick.tenant_logins t WHERE t.login = session_user));
CREATE POLICY own_tenant ON quick.dead_items FOR SELECT TO quick_producer
    USING (tenant = (SELECT t.tenant FROM quick.tenant_logins t WHERE t.login = session_user));

INSERT INTO quick.schema_migrations (version, name) VALUES (6, 'roles');

COMMIT;
