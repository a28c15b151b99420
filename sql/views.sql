-- Operator views: inspect quick-pg's queues with plain SQL (docs/inspecting.md has a cookbook).
--
-- Repeatable: every statement is CREATE OR REPLACE, and `quick migrate` re-applies this file after
-- the numbered migrations and sql/functions/, in the same transaction as the functions. By hand:
-- psql -X -1 -v ON_ERROR_STOP=1 -f sql/views.sql "$DATABASE_URL".
-- Views only add columns at the end (CREATE OR REPLACE VIEW cannot drop or reorder them).
--
-- Item states, on the database clock:
--   vested  vesting_time <= now(): a consumer may dequeue it now
--   leased  lease_id set and vesting_time > now(): a consumer holds it
--   delayed no lease and vesting_time > now(): enqueued with a delay, or backing off after errors

-- One row per non-empty queue zone.
CREATE OR REPLACE VIEW quick.zone_depth AS
SELECT i.tenant,
       count(*)                                                          AS items,
       count(*) FILTER (WHERE i.vesting_time <= now())                   AS vested,
       count(*) FILTER (WHERE i.lease_id IS NOT NULL AND i.vesting_time > now()) AS leased,
       count(*) FILTER (WHERE i.lease_id IS NULL AND i.vesting_time > now())     AS delayed,
       count(*) FILTER (WHERE i.error_count > 0)                         AS failing,
       now() - min(i.enqueued_at)                                        AS oldest_item_age,
       now() - min(i.vesting_time) FILTER (WHERE i.vesting_time <= now()) AS oldest_vested_wait,
       EXISTS (SELECT 1 FROM quick.paused_tenants t WHERE t.tenant = i.tenant) AS paused
  FROM quick.items i
 GROUP BY i.tenant;

COMMENT ON VIEW quick.zone_depth IS
'Per-tenant queue depth: items, vested/leased/delayed counts, failing items, oldest item age, paused.';

-- One row per job type.
CREATE OR REPLACE VIEW quick.job_type_counts AS
SELECT i.job_type,
       count(*)                                                          AS items,
       count(DISTINCT i.tenant)                                          AS tenants,
       count(*) FILTER (WHERE i.vesting_time <= now())                   AS vested,
       count(*) FILTER (WHERE i.lease_id IS NOT NULL AND i.vesting_time > now()) AS leased,
       count(*) FILTER (WHERE i.lease_id IS NULL AND i.vesting_time > now())     AS delayed,
       count(*) FILTER (WHERE i.error_count > 0)                         AS failing,
       max(i.error_count)                                                AS max_error_count,
       now() - min(i.enqueued_at)                                        AS oldest_item_age,
       EXISTS (SELECT 1 FROM quick.paused_job_types j WHERE j.job_type = i.job_type) AS paused
  FROM quick.items i
 GROUP BY i.job_type;

COMMENT ON VIEW quick.job_type_counts IS 'Per-job-type counts of queued items, and whether the type is paused.';

-- One row per pointer of the top-level queue.
CREATE OR REPLACE VIEW quick.pointer_lag AS
SELECT p.tenant,
       CASE WHEN p.lease_id IS NOT NULL AND p.vesting_time > now() THEN 'leased'
            WHEN p.vesting_time <= now() THEN 'vested'
            ELSE 'parked' END                                           AS state,
       p.vesting_time,
       greatest(now() - p.vesting_time, interval '0')                   AS lag,
       p.last_active_time,
       now() - p.last_active_time                                       AS idle_for,
       p.created_at
  FROM quick.pointers p;

COMMENT ON VIEW quick.pointer_lag IS
'Pointers with their state and lag (how long a vested pointer has waited for a consumer).';

-- Tenants that have items but no pointer. Always empty unless the invariant is broken.
CREATE OR REPLACE VIEW quick.orphaned_zones AS
SELECT i.tenant, count(*) AS items
  FROM quick.items i
 WHERE NOT EXISTS (SELECT 1 FROM quick.pointers p WHERE p.tenant = i.tenant)
 GROUP BY i.tenant;

COMMENT ON VIEW quick.orphaned_zones IS
'Zones with items but no pointer; consumers cannot find them. Must always be empty.';

-- One row: the whole queue at a glance.
CREATE OR REPLACE VIEW quick.queue_summary AS
SELECT (SELECT count(*) FROM quick.pointers)                                   AS pointers,
       (SELECT count(*) FROM quick.pointers WHERE vesting_time <= now())       AS vested_pointers,
       (SELECT count(*) FROM quick.items)                                      AS items,
       (SELECT count(*) FROM quick.items WHERE vesting_time <= now())          AS vested_items,
       (SELECT count(*) FROM quick.items
         WHERE lease_id IS NOT NULL AND vesting_time > now())                  AS leased_items,
       (SELECT greatest(now() - min(vesting_time), interval '0') FROM quick.pointers
         WHERE vesting_time <= now())                                          AS max_pointer_lag,
       (SELECT count(*) FROM quick.pointer_pulls)                              AS pending_pulls,
       (SELECT count(*) FROM quick.orphaned_zones)                             AS orphaned_zones;

COMMENT ON VIEW quick.queue_summary IS 'Totals for the whole queue, one row.';

-- What consumers skip right now (quick.pause_tenant, quick.pause_job_type; docs/operations.md).
CREATE OR REPLACE VIEW quick.paused AS
SELECT 'tenant'::text AS kind, t.tenant AS name, t.paused_at, t.paused_by, t.reason FROM quick.paused_tenants t
UNION ALL
SELECT 'job_type'::text, j.job_type, j.paused_at, j.paused_by, j.reason FROM quick.paused_job_types j;

COMMENT ON VIEW quick.paused IS 'Paused tenants and job types: consumers skip them, enqueue still works.';

-- Who may read the views (docs/security.md): operators and consumers, not producers, whose
-- tenants' depths and names they would otherwise see.
REVOKE ALL ON quick.zone_depth, quick.job_type_counts, quick.pointer_lag, quick.orphaned_zones, quick.queue_summary,
              quick.paused
    FROM PUBLIC, quick_producer, quick_consumer, quick_admin;
GRANT SELECT ON quick.zone_depth, quick.job_type_counts, quick.pointer_lag, quick.orphaned_zones, quick.queue_summary,
               quick.paused
    TO quick_consumer, quick_admin;
