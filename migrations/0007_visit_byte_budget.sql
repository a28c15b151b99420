-- quick-pg schema version 7: quick.visit_zones takes a byte budget (max_bytes), so the previous
-- signature goes; sql/functions/visit_zones.sql defines the new one.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 6) THEN
        RAISE EXCEPTION 'quick migration 0007 needs migration 0006 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 7) THEN
        RAISE EXCEPTION 'quick migration 0007 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- With the new parameter defaulted, the two signatures would make every call ambiguous.
DROP FUNCTION IF EXISTS quick.visit_zones(text[], integer, interval, interval, text[]);

INSERT INTO quick.schema_migrations (version, name) VALUES (7, 'visit_byte_budget');

COMMIT;
