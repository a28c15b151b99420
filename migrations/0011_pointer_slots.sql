-- quick-pg schema version 11: one pointer per zone is kept by quick.pointer_slots, not by a unique
-- index on quick.pointers (docs/protocol.md#pointer-slots).
--
-- Nearly every pointer update moves vesting_time, which pointers_vesting indexes, so it is not
-- HOT: it adds an entry to every index of quick.pointers. In a unique index that entry is checked
-- against every earlier version of the tenant's pointer, one heap fetch each, and while a long
-- snapshot holds vacuum back a busy zone's pointer keeps thousands of them: one update read 6,101
-- buffers at 6,000 versions, against 46 without the unique index (docs/benchmarks.md#10-held-snapshot).
--
-- So quick.pointers gets a plain index on tenant, and the rule "at most one pointer per tenant"
-- moves to quick.pointer_slots (tenant PRIMARY KEY), whose row is written only when a zone's
-- pointer is created or deleted. The triggers of sql/functions/pointer_slots.sql keep the two
-- together: inserting a pointer claims the tenant's slot first and inserts nothing when the slot
-- is taken (what INSERT ... ON CONFLICT (tenant) DO NOTHING did, including its 40001 under
-- REPEATABLE READ), and deleting a pointer frees its slot.
--
-- quick.pointers has no primary key any more; REPLICA IDENTITY FULL keeps its updates and
-- deletes publishable for logical replication.
--
-- Between this file and the function files (quick migrate applies both, seconds apart), creating a
-- new zone's pointer fails with an error (the enqueue fails; nothing queued is touched): the older
-- functions name the dropped unique index in ON CONFLICT. Pointers the older functions delete
-- meanwhile (collected zones, moves) leave their slots behind, as the triggers do not exist yet;
-- the first insert of such a tenant's pointer finds the slot without a pointer and takes it over.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 10) THEN
        RAISE EXCEPTION 'quick migration 0011 needs migration 0010 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 11) THEN
        RAISE EXCEPTION 'quick migration 0011 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- Taken first, so that no session holding a lower lock on the table can deadlock with the
-- DROP CONSTRAINT below; no pointer is created or deleted while the slots are filled.
LOCK TABLE quick.pointers IN ACCESS EXCLUSIVE MODE;

CREATE TABLE quick.pointer_slots (
    tenant text PRIMARY KEY  -- the tenant has a pointer in quick.pointers
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

INSERT INTO quick.pointer_slots (tenant) SELECT p.tenant FROM quick.pointers p;

ALTER TABLE quick.pointers DROP CONSTRAINT pointers_pkey;
CREATE INDEX pointers_tenant ON quick.pointers (tenant);
ALTER TABLE quick.pointers REPLICA IDENTITY FULL;

-- Reached through the definer functions only, like quick.pointers (migration 0006).
REVOKE ALL ON quick.pointer_slots FROM PUBLIC;
GRANT ALL ON quick.pointer_slots TO quick_admin;

INSERT INTO quick.schema_migrations (version, name) VALUES (11, 'pointer_slots');

COMMIT;
