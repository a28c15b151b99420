-- Steady shape, the plain SKIP LOCKED queue: the same JSON array's items into its jobs table.
\set r random(1, 1000)
INSERT INTO queue_jobs (tenant, priority, payload)
SELECT e->>'tenant', 0, '{}' FROM steady_docs, jsonb_array_elements(doc::jsonb) e WHERE id = :r;
