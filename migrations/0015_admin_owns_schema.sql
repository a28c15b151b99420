-- quick-pg schema version 15: quick_admin owns schema quick and everything in it
-- (docs/security.md#who-owns-the-schema).
--
-- Until now the login that first migrated a database owned the schema, so only that login could
-- run later migrations, and the SECURITY DEFINER functions ran with that login's rights (often a
-- superuser's). From now on the role quick_admin (NOLOGIN) owns the schema, its tables, views,
-- sequences, types and functions:
--   - any member of quick_admin can run `quick migrate` (it switches to the owning role), and so
--     controls the functions every other role calls (docs/security.md says what that means);
--   - the definer functions run as quick_admin, a role with rights on schema quick only.
--
-- Changing an object's owner needs membership in the new owner, so the migrating login must be a
-- superuser, a member of quick_admin, or may grant itself quick_admin (CREATEROLE on PostgreSQL
-- 15); otherwise this migration stops and asks for the grant. The login that owned the schema is
-- made a member, so that it keeps its access. It ends by switching the session to quick_admin
-- (SET ROLE, kept after the commit), so that the function and view files applied after it in the
-- same psql session belong to quick_admin as well; `quick migrate` restores the session's role
-- when it finishes. Migrations after this one run as quick_admin, which may not create roles or
-- extensions: one that needs more says so.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 14) THEN
        RAISE EXCEPTION 'quick migration 0015 needs migration 0014 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 15) THEN
        RAISE EXCEPTION 'quick migration 0015 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- The migrating login must be able to act as quick_admin (changing an owner needs membership in
-- the new one): it grants itself membership when it may (CREATEROLE on PostgreSQL 15), else stops.
-- The login that owned the schema until now keeps its access: it becomes a member too (an
-- application often connects as the database's owner, which installed quick-pg; without this, a
-- superuser applying this migration would leave that login with no right on schema quick).
DO $membership$
DECLARE
    previous_owner name := (SELECT pg_catalog.pg_get_userbyid(n.nspowner) FROM pg_catalog.pg_namespace n
                             WHERE n.nspname = 'quick');
    member name;
BEGIN
    FOREACH member IN ARRAY ARRAY[current_user, previous_owner] LOOP
        CONTINUE WHEN pg_catalog.pg_has_role(member, 'quick_admin', 'MEMBER');
        IF member = current_user AND NOT (SELECT r.rolcreaterole FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
            RAISE EXCEPTION 'quick migration 0015: % is not a member of quick_admin, which is to own schema quick',
                            current_user
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As an administrator: GRANT quick_admin TO %I; then migrate again '
                                    '(docs/security.md#who-owns-the-schema).', current_user);
        END IF;
        BEGIN
            EXECUTE format('GRANT quick_admin TO %I', member);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION 'quick migration 0015: % may not grant quick_admin to %, which is to own schema quick',
                            current_user, member
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('As an administrator: GRANT quick_admin TO %I; then migrate again '
                                    '(docs/security.md#who-owns-the-schema).', member);
        END;
    END LOOP;
END
$membership$;

-- Every object of the schema. Indexes, policies, triggers, a table's row type and the sequences
-- that belong to a table's column follow their table; array types follow their element type.
-- (Standalone composite types would need ALTER TYPE: there are none.) ALTER TABLE takes an ACCESS
-- EXCLUSIVE lock on each table until the commit: running consumers wait for a moment, and a
-- deadlock with one rolls this migration back whole (the next migrate applies it again).
DO $owner$
DECLARE
    object record;
BEGIN
    ALTER SCHEMA quick OWNER TO quick_admin;
    FOR object IN
        SELECT c.oid::regclass AS name,
               CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE'
                              WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind
          FROM pg_catalog.pg_class c
         WHERE c.relnamespace = 'quick'::regnamespace
           AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
           AND NOT (c.relkind = 'S' AND EXISTS (
                   SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
                      AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')))
         ORDER BY c.oid
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO quick_admin', object.kind, object.name);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS name,
               CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END AS kind
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace = 'quick'::regnamespace
         ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO quick_admin', object.kind, object.name);
    END LOOP;
    FOR object IN
        SELECT t.oid::regtype AS name, CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END AS kind
          FROM pg_catalog.pg_type t
         WHERE t.typnamespace = 'quick'::regnamespace
           AND t.typtype IN ('e', 'd', 'r')  -- enums, domains, ranges (tables' row types follow the table)
         ORDER BY t.oid
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO quick_admin', object.kind, object.name);
    END LOOP;
END
$owner$;

-- Functions quick_admin creates from now on are not executable by PUBLIC, not even between a
-- function file's CREATE and its REVOKE. Default privileges belong to the role that creates, and
-- a per-schema REVOKE cannot take away the global default (PUBLIC's EXECUTE): so for the role.
ALTER DEFAULT PRIVILEGES FOR ROLE quick_admin REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

INSERT INTO quick.schema_migrations (version, name) VALUES (15, 'admin_owns_schema');

-- The rest of this session (the function and view files after the migrations) creates as the owner.
SET ROLE quick_admin;

COMMIT;
