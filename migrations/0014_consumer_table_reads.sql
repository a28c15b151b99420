-- quick-pg schema version 14: quick_consumer no longer reads tables directly (docs/security.md).
--
-- Migrations 0008 and 0009 gave quick_consumer SELECT on the pause lists and the placement
-- tables. Nothing a consumer runs reads them: the visits, the views (quick.paused and the
-- operator views, which read with their owner's rights) and the dashboard's functions do. So
-- producers and consumers now reach every table only through the definer functions and the
-- views, as issue 13 asks; quick_admin keeps its rights.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 13) THEN
        RAISE EXCEPTION 'quick migration 0014 needs migration 0013 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 14) THEN
        RAISE EXCEPTION 'quick migration 0014 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

REVOKE SELECT ON quick.paused_tenants, quick.paused_job_types, quick.moved_tenants, quick.placement_databases,
                 quick.tenant_placements FROM quick_consumer;

INSERT INTO quick.schema_migrations (version, name) VALUES (14, 'consumer_table_reads');

COMMIT;
