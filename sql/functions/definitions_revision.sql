-- The revision of this build's SQL definitions: every file of sql/functions/ and sql/views.sql.
-- It goes up by one whenever any of them changes, so that `quick migrate` of an older build,
-- which replaces every function with its own, refuses a database a newer build migrated instead
-- of taking its functions back (docs/operations.md#upgrading-and-going-back). The migrator reads
-- the number from this body, in the database (pg_proc.prosrc) and in its own copy.
-- tests/schema/definitions_revision_test.cc records the other files' fingerprint for this
-- revision, and fails when they change and the number does not.
CREATE OR REPLACE FUNCTION quick.definitions_revision()
RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;
REVOKE ALL ON FUNCTION quick.definitions_revision() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.definitions_revision() TO quick_producer, quick_consumer, quick_admin;
