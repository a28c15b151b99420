-- Steady shape: quick.enqueue_batch on the same JSON array.
\set r random(1, 1000)
SELECT count(*) FROM quick.enqueue_batch((SELECT doc::jsonb FROM steady_docs WHERE id = :r));
