-- quick-pg schema version 12: an item's place in its zone is its own column, zone_time, so that a
-- lease leaves the zone index alone (docs/protocol.md#zone-time-and-leases).
--
-- Until now the zone index ordered items by (priority, vesting_time), and a lease is a vesting-time
-- bump: every lease moved its item in the index, to the lease's expiry, leaving one more index
-- entry per job, and no lease was a HOT update. While a long snapshot holds vacuum back, those
-- entries lie ahead of every zone's floor, between now and now + the lease duration, and the
-- settle's probe for a zone's lowest key (and later the dequeue, as new items' keys catch up with
-- them) stepped over every one, one heap fetch each (docs/benchmarks.md#10-held-snapshot).
--
-- quick.items gets zone_time: the vesting time the item was last queued with (enqueue, requeue,
-- release, retry). The zone index becomes (tenant, priority, zone_time). vesting_time keeps its
-- meaning, when the item is next available (for a leased item, when its lease runs out), and is
-- no longer indexed, so taking, extending and ending a lease change no indexed column: HOT updates
-- when the page has room, and in any case no entry away from the item's place in its zone.
-- zone_time <= vesting_time always; they are equal for an item that is not leased.
--
-- Existing rows get zone_time = vesting_time, except items leased right now, which get the
-- migration's time: their place is in the past, where a scan finds them if their lease runs out.
-- This writes a new version of every row of quick.items (the table holds each row twice until
-- the next vacuum) and rebuilds its zone index, under a lock that stops enqueues and consumers for
-- the time it takes: on a large backlog, apply it in a quiet moment. Every zone's floor is
-- dropped (its scans start from the zone's beginning until its next settle raises it again).
--
-- Between this file and the function files (quick migrate applies both, seconds apart), an enqueue
-- through the older functions fails (zone_time is NOT NULL; nothing queued is touched), and so
-- does a consumer's visit: quick.visit_zones is dropped here, because the older one would lease
-- items without moving them in the new index and then raise its zone's floor past them, by their
-- lease's expiry. Consumers retry their visits; the function files create it again.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 11) THEN
        RAISE EXCEPTION 'quick migration 0012 needs migration 0011 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 12) THEN
        RAISE EXCEPTION 'quick migration 0012 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- Taken first: no session holding a lower lock on the table can deadlock with the rewrite below.
LOCK TABLE quick.items IN ACCESS EXCLUSIVE MODE;

DROP FUNCTION IF EXISTS quick.visit_zones(text[], integer, interval, interval, text[], bigint);

ALTER TABLE quick.items ADD COLUMN zone_time timestamptz;
UPDATE quick.items
   SET zone_time = CASE WHEN lease_id IS NOT NULL AND vesting_time > now() THEN now() ELSE vesting_time END;
ALTER TABLE quick.items ALTER COLUMN zone_time SET NOT NULL;
UPDATE quick.pointers SET floor_priority = NULL, floor_vesting = NULL WHERE floor_priority IS NOT NULL;

DROP INDEX quick.items_zone_order;
-- The zone index: peek, dequeue and the visits walk one tenant's items in (priority, zone_time) order.
CREATE INDEX items_zone_order ON quick.items (tenant, priority, zone_time);

-- Room on each page for a lease's new row version next to the old one, so that it can be a HOT
-- update even while a long snapshot keeps the page from being pruned. Applies to pages filled
-- from now on.
ALTER TABLE quick.items SET (fillfactor = 70);

INSERT INTO quick.schema_migrations (version, name) VALUES (12, 'zone_time');

COMMIT;
