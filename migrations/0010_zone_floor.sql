-- quick-pg schema version 10: each zone's floor, so that the zone scans start past what the zone
-- has consumed (docs/protocol.md#the-zone-floor).
--
-- quick.pointers gets floor_priority and floor_vesting: no item of the zone sorts before
-- (floor_priority, floor_vesting) in the zone index's order, unless a pull request in
-- quick.pointer_pulls names a key at or below it. A visit raises the floor of each zone it settles;
-- enqueues and requeues that would write below it record a pull request with the item's
-- priority, and applying the request lowers the floor. NULL: no floor, scans start at the zone's
-- beginning (every pointer starts so). Without a floor every zone scan walks every index entry
-- the zone's consumed items left behind, and while a long snapshot holds vacuum back those are
-- two per job ever consumed (docs/benchmarks.md#10-held-snapshot).
--
-- quick.pointer_pulls gets priority: with vesting_time, the lowest key of the items the request
-- was made for (NULL on requests recorded before this migration, which lower no floor).
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 9) THEN
        RAISE EXCEPTION 'quick migration 0010 needs migration 0009 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 10) THEN
        RAISE EXCEPTION 'quick migration 0010 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- Nullable and without a default: adding them rewrites nothing. Neither is indexed, so raising
-- the floor is an update HOT can keep off pointers_vesting when the vesting time stays.
ALTER TABLE quick.pointers
    ADD COLUMN floor_priority integer,
    ADD COLUMN floor_vesting  timestamptz,
    ADD CONSTRAINT pointers_floor_whole CHECK ((floor_priority IS NULL) = (floor_vesting IS NULL));

ALTER TABLE quick.pointer_pulls ADD COLUMN priority integer;

-- The requeue paths now pass the items' priorities; the old signature goes.
DROP FUNCTION IF EXISTS quick.request_pointer_pulls(text[], timestamptz[]);
-- The Scanner's reads take floors (docs/consumer.md#scanning-from-a-floor); the new parameters
-- default to NULL, so calls with the old arguments reach the new functions.
DROP FUNCTION IF EXISTS quick.scan_pointers(integer, integer);
DROP FUNCTION IF EXISTS quick.apply_pointer_pulls(integer);
DROP FUNCTION IF EXISTS quick.peek_pointers(integer);

INSERT INTO quick.schema_migrations (version, name) VALUES (10, 'zone_floor');

COMMIT;
