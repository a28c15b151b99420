-- quick.enqueue_batch itself, on a pre-built JSON array of 100 items (text, parsed as a client's
-- parameter is).
\set r random(1, 1000)
SELECT count(*) FROM quick.enqueue_batch((SELECT doc::jsonb FROM batch_docs WHERE id = :r));
