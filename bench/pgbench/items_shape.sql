-- quick.items' row shape with all its indexes, the zone index (tenant, priority, zone_time)
-- included; no pointer locks.
INSERT INTO items_shape (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT 't' || (random() * 9999)::int, 'send_receipt', 0, statement_timestamp(), statement_timestamp(),
       ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb
  FROM generate_series(1, 100);
