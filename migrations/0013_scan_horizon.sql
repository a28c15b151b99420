-- quick-pg schema version 13: the Scanner bounds how far ahead it reads the next vesting time
-- (docs/consumer.md#waking-up).
--
-- quick.scan_pointers gets a fifth parameter, next_vesting_within (default NULL: no bound, as
-- before). The function files create the new function; the old signature is dropped here, since
-- a call with four arguments would otherwise match both. Between this file and the function files
-- (quick migrate applies both, seconds apart) a Scanner's scan fails and is retried; nothing
-- queued is touched.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 12) THEN
        RAISE EXCEPTION 'quick migration 0013 needs migration 0012 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 13) THEN
        RAISE EXCEPTION 'quick migration 0013 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

DROP FUNCTION IF EXISTS quick.scan_pointers(integer, integer, timestamptz, timestamptz);

INSERT INTO quick.schema_migrations (version, name) VALUES (13, 'scan_horizon');

COMMIT;
