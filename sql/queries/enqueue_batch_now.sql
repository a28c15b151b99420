-- Several items committed on their own (quick::enqueue_batch: one autocommit statement); $1 is
-- the JSON array enqueue_batch_in builds, $2 whether any item has a client item id. The common
-- case through quick.enqueue_batch_into_existing_zones, pulling parked pointers at once (the
-- statement's transaction commits right after it). When it inserted nothing (a new zone, a
-- client item id, an item the database refuses), quick.enqueue_batch does it all: its branch is
-- gated by a one-time filter over the materialized fast path's rows, so it runs only then.
-- Fast-path rows carry no ordinal (their ids ascend in input order); quick.enqueue_batch's do.
WITH fast AS MATERIALIZED (
    SELECT f.id FROM quick.enqueue_batch_into_existing_zones($1::jsonb, true) f(id) WHERE NOT $2::boolean)
SELECT NULL::integer AS ordinal, fast.id AS item_id, false AS duplicate FROM fast
UNION ALL
SELECT b.ordinal, b.item_id, b.duplicate FROM quick.enqueue_batch($1::jsonb) b
 WHERE NOT EXISTS (SELECT 1 FROM fast)
