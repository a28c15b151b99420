-- quick-pg schema version 9: tenants placed across several databases, and moved with their work
-- (docs/scaling.md).
--
-- In every database:
--   quick.moved_tenants        the fence a move leaves at its source: the tenant's work is now in
--                              database moved_to, and enqueues for it here are refused
--                              (SQLSTATE QM001, naming where it went)
--   quick.placement_guards     256 rows a move updates, so that an enqueue whose REPEATABLE READ or
--                              SERIALIZABLE snapshot predates the move fails with 40001 instead of
--                              writing into the old place (docs/scaling.md#fencing)
-- In the database the operator names as the placement directory (the tables exist everywhere and
-- stay empty elsewhere):
--   quick.placement_databases  the databases tenants may be placed in, by the names the
--                              configuration gives them; those with in_default_rule place the
--                              tenants nobody placed explicitly (a rendezvous hash)
--   quick.tenant_placements    tenants placed explicitly, by a move or by an operator
--   quick.tenant_moves         every move: written when it starts, and its decision (commit or
--                              abort) written once: the record that says how a move interrupted
--                              after PREPARE TRANSACTION ends
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 8) THEN
        RAISE EXCEPTION 'quick migration 0009 needs migration 0008 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 9) THEN
        RAISE EXCEPTION 'quick migration 0009 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

CREATE TABLE quick.moved_tenants (
    tenant   text        PRIMARY KEY CHECK (length(tenant) BETWEEN 1 AND 200),
    moved_to text        NOT NULL CHECK (length(moved_to) BETWEEN 1 AND 100),
    move_id  uuid        NOT NULL,
    moved_at timestamptz NOT NULL DEFAULT statement_timestamp()
);

CREATE TABLE quick.placement_guards (
    shard integer PRIMARY KEY CHECK (shard BETWEEN 0 AND 255),
    moves bigint  NOT NULL DEFAULT 0
);
INSERT INTO quick.placement_guards (shard) SELECT generate_series(0, 255);

CREATE TABLE quick.placement_databases (
    name            text        PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 100),
    in_default_rule boolean     NOT NULL DEFAULT true,
    added_at        timestamptz NOT NULL DEFAULT statement_timestamp()
);

CREATE TABLE quick.tenant_placements (
    tenant        text        PRIMARY KEY CHECK (length(tenant) BETWEEN 1 AND 200),
    database_name text        NOT NULL REFERENCES quick.placement_databases (name),
    placed_at     timestamptz NOT NULL DEFAULT statement_timestamp(),
    move_id       uuid        -- the move that placed it here; NULL when an operator did
);
CREATE INDEX tenant_placements_database ON quick.tenant_placements (database_name);

CREATE TABLE quick.tenant_moves (
    move_id       uuid        PRIMARY KEY,
    tenant        text        NOT NULL,
    from_database text        NOT NULL,
    to_database   text        NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
    decision      text        CHECK (decision IN ('commit', 'abort')),  -- NULL: not decided yet
    decided_at    timestamptz,
    decided_by    text,                   -- 'mover' or 'recovery'
    items         bigint,
    finished_at   timestamptz             -- both databases committed (or rolled back)
);
CREATE INDEX tenant_moves_tenant ON quick.tenant_moves (tenant, started_at);

GRANT ALL ON quick.moved_tenants, quick.placement_guards, quick.placement_databases, quick.tenant_placements,
             quick.tenant_moves TO quick_admin;
GRANT SELECT ON quick.moved_tenants, quick.placement_databases, quick.tenant_placements TO quick_consumer;

INSERT INTO quick.schema_migrations (version, name) VALUES (9, 'placement');

COMMIT;
