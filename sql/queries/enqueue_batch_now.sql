-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- Several items committed on their own (quick::enqueue_batch: one autocommit statement); $1 is
-- the JSON array enqueue_batch_in builds, $2 whether any item has a client item id. The common
-- case through quick.enqueue_batch_into_existing_zones, pulling parked pointers at once (the
-- statement's transaction commits right after it). When it inserted nothing (a new zone, a
-- client item id, an item the database refuses), quick.enqueue_batch does it all: its branch is
-- gated by a one-time filter over the materialized fast path's rows, so it runs only then.
-- Fast-path rows carry no ordinal (their ids ascend in input order); quick.enqueue_batch's do.
--
-- The wake-up waits for the commit, as in enqueue_now.sql: w sets quick.wake_consumers to
-- one_call before the fast path runs (it refers to w), and so before quick.enqueue_batch,
-- which runs only after the fast path's rows are known; every row carries wakeup_due, read once
-- all of them were produced (both branches are set-returning plpgsql functions, which run to
-- their end before returning a row). Should w ever run
-- after a notifying branch, that branch notified in the transaction, as without the setting, and
-- wakeup_due is false: never both, never neither. With a client item id ($2) the fast path, and
-- so w, may not run at all: quick.enqueue_batch then notifies in the transaction.
WITH w AS MATERIALIZED (
    SELECT pg_catalog.set_config('quick.wake_consumers',
             CASE WHEN pg_catalog.lower(pg_catalog.current_setting('quick.wake_consumers', true)) IN ('off', 'false')
                  THEN 'off' ELSE 'one_call' END, true) AS mode),
fast AS MATERIALIZED (
    SELECT f.id FROM w, LATERAL quick.enqueue_batch_into_existing_zones($1::jsonb, w.mode IS NOT NULL) f(id)
     WHERE NOT $2::boolean),
everything AS MATERIALIZED (
    SELECT NULL::integer AS ordinal, fast.id AS item_id, false AS duplicate FROM fast
    UNION ALL
    SELECT b.ordinal, b.item_id, b.duplicate FROM quick.enqueue_batch($1::jsonb) b
     WHERE NOT EXISTS (SELECT 1 FROM fast))
SELECT everything.ordinal, everything.item_id, everything.duplicate,
       pg_catalog.current_setting('quick.wakeup_due', true) IS NOT DISTINCT FROM 'on' AS wakeup_due
  FROM everything
