-- Not quick-pg's protocol: the same as lock_and_insert.sql with a shared advisory lock per
-- distinct tenant in place of the pointer's FOR KEY SHARE row lock. A lower bound for what a
-- cheaper lock could save; docs/benchmarks-history.md#batches-of-100-enqueues says why quick-pg
-- keeps the row lock.
WITH input AS MATERIALIZED (
    SELECT 't' || (random() * 9999)::int AS t,
           ('{"order_id": ' || (random() * 1e6)::int || ', "channel": "email", "attempt": 1}')::jsonb AS pl
      FROM generate_series(1, 100)),
locked AS MATERIALIZED (
    SELECT pg_advisory_xact_lock_shared(hashtext(s.t)) FROM (SELECT DISTINCT t FROM input ORDER BY t) s)
INSERT INTO items_locked (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT t, 'send_receipt', 0, statement_timestamp(), statement_timestamp(), pl FROM input WHERE (SELECT count(*) FROM locked) > 0;
