-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- One item without a client item id, committed on its own (quick::enqueue: one autocommit
-- statement). The common case through quick.enqueue_into_existing_zone, which also moves a parked
-- pointer at once (pull_in_transaction: this statement's transaction commits right after it, so
-- the pointer is held only that long). Only when that inserted nothing (a new zone, or an item
-- the database refuses) does quick.enqueue run: COALESCE stops at its first non-NULL argument,
-- and the subquery, an InitPlan, is evaluated only when COALESCE reaches it.
--
-- The wake-up waits for the commit (quick.notify_consumers, mode one_call): the statement
-- sets quick.wake_consumers for its transaction first (w: the enqueue refers to w, so it runs
-- after it; a session that turned notifications off keeps them off) and returns wakeup_due; the
-- caller then notifies in a transaction of its own (wake_up_after_commit.sql).
SELECT e.item_id, pg_catalog.current_setting('quick.wakeup_due', true) IS NOT DISTINCT FROM 'on' AS wakeup_due
  FROM (SELECT pg_catalog.set_config('quick.wake_consumers',
             CASE WHEN pg_catalog.lower(pg_catalog.current_setting('quick.wake_consumers', true)) IN ('off', 'false')
                  THEN 'off' ELSE 'one_call' END, true) AS mode) w,
       LATERAL (SELECT coalesce(quick.enqueue_into_existing_zone($1, $2, $3::jsonb, $4::interval, $5, true),
                                (SELECT x.item_id FROM quick.enqueue($1, $2, $3::jsonb, $4::interval, $5) x)) AS item_id
                 WHERE w.mode IS NOT NULL) e
