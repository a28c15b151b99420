-- Tables for enqueue_floor.sh, in a scratch database that already has the quick schema.
-- 10,000 tenants with one queued item each (so every tenant has a pointer), as in the enqueue
-- experiment; a bare table like the benchmark's baseline; two copies of quick.items' shape.
SELECT count(*) FROM quick.enqueue_batch(
    (SELECT jsonb_agg(jsonb_build_object('tenant', 't' || g, 'job_type', 'seed')) FROM generate_series(0, 9999) g));

CREATE TABLE bare_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text NOT NULL, job_type text NOT NULL, payload jsonb NOT NULL,
    created timestamptz NOT NULL DEFAULT now());

-- quick.items' columns, defaults and indexes (primary key, zone index, partial unique index).
CREATE TABLE items_shape (LIKE quick.items INCLUDING ALL);
INSERT INTO items_shape (tenant, job_type, vesting_time) SELECT 't' || g, 'seed', now() FROM generate_series(0, 9999) g;
-- The same without the zone index (tenant, priority, vesting_time).
CREATE TABLE items_no_zone_index (LIKE quick.items INCLUDING DEFAULTS INCLUDING IDENTITY);
ALTER TABLE items_no_zone_index ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX ON items_no_zone_index (tenant, client_item_id) WHERE client_item_id IS NOT NULL;
INSERT INTO items_no_zone_index (tenant, job_type, vesting_time) SELECT 't' || g, 'seed', now() FROM generate_series(0, 9999) g;
-- Target of the lock-and-insert variant, so that quick.items stays as the function found it.
CREATE TABLE items_locked (LIKE quick.items INCLUDING ALL);
INSERT INTO items_locked (tenant, job_type, vesting_time) SELECT 't' || g, 'seed', now() FROM generate_series(0, 9999) g;
VACUUM ANALYZE;
