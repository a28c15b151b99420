-- Puts every table enqueue_floor.sh writes back to its seeded state (10,000 tenants, one queued
-- item each, every tenant with a pointer), so that each variant starts from tables of the same
-- size: an index that has grown past shared_buffers costs more per insert than a small one.
TRUNCATE bare_jobs, queue_jobs, items_shape, items_no_zone_index, items_locked, quick.items, quick.pointer_pulls;
INSERT INTO quick.items (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
INSERT INTO items_shape (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
INSERT INTO items_no_zone_index (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
INSERT INTO items_locked (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
VACUUM ANALYZE;
CHECKPOINT;
