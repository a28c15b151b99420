-- Steady shape, baseline: the same JSON array's items into the bare table.
\set r random(1, 1000)
INSERT INTO bare_jobs (tenant, job_type, payload)
SELECT e->>'tenant', e->>'job_type', '{}' FROM steady_docs, jsonb_array_elements(doc::jsonb) e WHERE id = :r;
