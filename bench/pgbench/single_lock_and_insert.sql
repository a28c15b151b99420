-- Single shape, the protocol's minimum in one statement: FOR KEY SHARE on the tenant's pointer,
-- then the item; no plpgsql, no validation, no pull request.
\set t random(0, 9999)
\set o random(1, 1000000)
WITH p AS MATERIALIZED (SELECT p.tenant FROM quick.pointers p WHERE p.tenant = 't' || :t FOR KEY SHARE)
INSERT INTO items_locked (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT p.tenant, 'send_receipt', 0, statement_timestamp(), statement_timestamp(),
       ('{"order_id": ' || :o || ', "channel": "email", "attempt": 1}')::jsonb
  FROM p;
