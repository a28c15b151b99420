-- Single shape: one row of quick.items' shape, with all its indexes (the zone index included);
-- no pointer lock, no function.
\set t random(0, 9999)
\set o random(1, 1000000)
INSERT INTO items_shape (tenant, job_type, priority, vesting_time, zone_time, payload)
VALUES ('t' || :t, 'send_receipt', 0, statement_timestamp(), statement_timestamp(),
        ('{"order_id": ' || :o || ', "channel": "email", "attempt": 1}')::jsonb);
