-- The protocol's minimum as the producer calls it: the same JSON array the fast path reads (one
-- parameter, parsed on the server), FOR KEY SHARE on each distinct tenant's pointer (in tenant
-- order), the items inserted in input order, their ids returned; no defaults, no payload limit,
-- no pull requests. What separates it from the fast path is quick-pg's own work.
\set r random(1, 1000)
WITH input AS MATERIALIZED (
    SELECT a.e->>'tenant' AS t, a.e->>'job_type' AS jt, coalesce(a.e->'payload', '{}'::jsonb) AS pl, a.ord
      FROM jsonb_array_elements((SELECT doc::jsonb FROM batch_docs WHERE id = :r)) WITH ORDINALITY AS a(e, ord)),
locked AS MATERIALIZED (
    SELECT p.tenant FROM (SELECT DISTINCT t FROM input ORDER BY t) s
     CROSS JOIN LATERAL (SELECT p.tenant FROM quick.pointers p WHERE p.tenant = s.t FOR KEY SHARE) p)
INSERT INTO items_locked (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT t, jt, 0, statement_timestamp(), statement_timestamp(), pl FROM input WHERE (SELECT count(*) FROM locked) > 0
 ORDER BY ord
RETURNING id;
