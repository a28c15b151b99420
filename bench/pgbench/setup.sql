-- Tables for enqueue_floor.sh, in a scratch database that already has the quick schema.
-- 10,000 tenants with one queued item each (so every tenant has a pointer), as in the enqueue
-- experiment; a bare table like the benchmark's baseline; two copies of quick.items' shape.
SELECT count(*) FROM quick.enqueue_batch(
    (SELECT jsonb_agg(jsonb_build_object('tenant', 't' || g, 'job_type', 'seed')) FROM generate_series(0, 9999) g));

CREATE TABLE bare_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text NOT NULL, job_type text NOT NULL, payload jsonb NOT NULL,
    created timestamptz NOT NULL DEFAULT now());

-- The plain SKIP LOCKED queue's table, as the benchmark's baseline queue creates it
-- (bench/support/baseline_queue.cc): the bare table plus the index its consumers claim by.
CREATE TABLE queue_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text NOT NULL, priority integer NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL DEFAULT statement_timestamp(), payload jsonb NOT NULL DEFAULT '{}');
CREATE INDEX ON queue_jobs (priority, run_at);

-- quick.items' columns, defaults and indexes (primary key, zone index, partial unique index).
CREATE TABLE items_shape (LIKE quick.items INCLUDING ALL);
INSERT INTO items_shape (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
-- The same without the zone index (tenant, priority, zone_time).
CREATE TABLE items_no_zone_index (LIKE quick.items INCLUDING DEFAULTS INCLUDING IDENTITY);
ALTER TABLE items_no_zone_index ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX ON items_no_zone_index (tenant, client_item_id) WHERE client_item_id IS NOT NULL;
INSERT INTO items_no_zone_index (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
-- Target of the lock-and-insert variants, so that quick.items stays as the function found it.
CREATE TABLE items_locked (LIKE quick.items INCLUDING ALL);
INSERT INTO items_locked (tenant, job_type, vesting_time, zone_time) SELECT 't' || g, 'seed', now(), now() FROM generate_series(0, 9999) g;
VACUUM ANALYZE;
-- Pre-built enqueue_batch inputs, so that the server parses JSON text as it does for a client's
-- call instead of building it: 1,000 arrays of 100 items into random tenants (the batch shape),
-- and 1,000 arrays of 24 enqueues of 1-4 items for one random tenant each (the steady-state
-- experiment's 5 ms tick of a producer at ~13k items/s: ~60 items, ~24 tenants).
SELECT setseed(0.42);
CREATE TABLE batch_docs AS
SELECT d AS id,
       (SELECT jsonb_agg(jsonb_build_object(
                   'tenant', 't' || x.t, 'job_type', 'send_receipt',
                   'payload', jsonb_build_object('order_id', (random() * 1e6)::int, 'channel', 'email', 'attempt', 1)))::text
          -- d in the FROM list, not in the aggregate: one array per row of the outer query.
          FROM (SELECT (random() * 9999)::int + d * 0 AS t FROM generate_series(1, 100)) x) AS doc
  FROM generate_series(1, 1000) d;
CREATE TABLE steady_docs AS
SELECT d AS id,
       (SELECT jsonb_agg(jsonb_build_object('tenant', 't' || e.t, 'job_type', 'noop'))::text
          FROM (SELECT (random() * 9999)::int + d * 0 AS t, 1 + (random() * 3)::int AS n
                  FROM generate_series(1, 24)) e,
               generate_series(1, e.n)) AS doc
  FROM generate_series(1, 1000) d;
ALTER TABLE batch_docs ADD PRIMARY KEY (id);
ALTER TABLE steady_docs ADD PRIMARY KEY (id);
VACUUM ANALYZE batch_docs, steady_docs;
