-- Batch shape, the plain SKIP LOCKED queue: 100 rows into its jobs table, whose (priority, run_at)
-- index its consumers need.
INSERT INTO queue_jobs (tenant, priority, payload)
SELECT 't' || (random() * 9999)::int, 0,
       ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb
  FROM generate_series(1, 100);
