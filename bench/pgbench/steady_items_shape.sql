-- Steady shape: quick.items' row shape with all its indexes, the zone index included; no locks.
\set r random(1, 1000)
INSERT INTO items_shape (tenant, job_type, priority, vesting_time, zone_time, payload)
SELECT e->>'tenant', e->>'job_type', 0, statement_timestamp(), statement_timestamp(), '{}'
  FROM steady_docs, jsonb_array_elements(doc::jsonb) e WHERE id = :r;
