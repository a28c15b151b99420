-- quick-pg schema version 8: operators steer the queue (docs/operations.md).
--
--   quick.paused_tenants, quick.paused_job_types  consumers skip what is listed here; enqueue
--                                                 still works. Written by quick.pause_* and
--                                                 quick.resume_* (sql/functions/pauses.sql).
--   quick.limits.dead_item_max_age                dead items older than this are deleted by the
--                                                 consumer that holds the in-order role; NULL (the
--                                                 default) keeps them until purged.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 7) THEN
        RAISE EXCEPTION 'quick migration 0008 needs migration 0007 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 8) THEN
        RAISE EXCEPTION 'quick migration 0008 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- Small tables, read by every scan and visit: one row per paused tenant or job type.
CREATE TABLE quick.paused_tenants (
    tenant    text        PRIMARY KEY CHECK (length(tenant) BETWEEN 1 AND 200),
    paused_at timestamptz NOT NULL DEFAULT statement_timestamp(),
    paused_by name        NOT NULL DEFAULT session_user,
    reason    text
);
CREATE TABLE quick.paused_job_types (
    job_type  text        PRIMARY KEY CHECK (length(job_type) BETWEEN 1 AND 100),
    paused_at timestamptz NOT NULL DEFAULT statement_timestamp(),
    paused_by name        NOT NULL DEFAULT session_user,
    reason    text
);
GRANT ALL ON quick.paused_tenants, quick.paused_job_types TO quick_admin;
GRANT SELECT ON quick.paused_tenants, quick.paused_job_types TO quick_consumer;

-- Dead items' retention. The largest value is bounded like every other duration.
ALTER TABLE quick.limits ADD COLUMN dead_item_max_age interval
    CHECK (dead_item_max_age IS NULL OR (dead_item_max_age >= interval '1 minute'
                                         AND dead_item_max_age <= interval '100 years'));

-- Retention deletes by age: the oldest first, from an index.
CREATE INDEX dead_items_died_at ON quick.dead_items (died_at);

INSERT INTO quick.schema_migrations (version, name) VALUES (8, 'operations');

COMMIT;
