-- The baseline: 100 rows into a bare table with one index.
INSERT INTO bare_jobs (tenant, job_type, payload)
SELECT 't' || (random() * 9999)::int, 'send_receipt',
       ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb
  FROM generate_series(1, 100);
