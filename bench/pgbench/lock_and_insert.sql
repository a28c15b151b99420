-- The protocol's minimum in one statement: lock each distinct tenant's pointer FOR KEY SHARE (in
-- tenant order), then insert the items; no plpgsql, no JSON, no validation, no pull requests.
WITH input AS MATERIALIZED (
    SELECT 't' || (random() * 9999)::int AS t,
           ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb AS pl
      FROM generate_series(1, 100)),
locked AS MATERIALIZED (
    SELECT p.tenant FROM (SELECT DISTINCT t FROM input ORDER BY t) s
     CROSS JOIN LATERAL (SELECT p.tenant FROM quick.pointers p WHERE p.tenant = s.t FOR KEY SHARE) p)
INSERT INTO items_locked (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT t, 'send_receipt', 0, statement_timestamp(), statement_timestamp(), pl FROM input WHERE (SELECT count(*) FROM locked) > 0;
