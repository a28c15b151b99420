-- Steady shape, the protocol's minimum in one statement: FOR KEY SHARE on each distinct tenant's
-- pointer (in tenant order), then the items; no plpgsql, no validation, no pull requests.
\set r random(1, 1000)
WITH input AS MATERIALIZED (
    SELECT e->>'tenant' AS t FROM steady_docs, jsonb_array_elements(doc::jsonb) e WHERE id = :r),
locked AS MATERIALIZED (
    SELECT p.tenant FROM (SELECT DISTINCT t FROM input ORDER BY t) s
     CROSS JOIN LATERAL (SELECT p.tenant FROM quick.pointers p WHERE p.tenant = s.t FOR KEY SHARE) p)
INSERT INTO items_locked (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT t, 'noop', 0, statement_timestamp(), statement_timestamp(), '{}' FROM input WHERE (SELECT count(*) FROM locked) > 0;
