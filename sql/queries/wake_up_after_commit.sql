-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The one-call enqueues' wake-up, in a transaction of its own after their statement committed
-- with wakeup_due (enqueue_now.sql). It sends whatever the session's quick.wake_consumers says
-- (after_commit too: that mode only defers), so it forces the mode on for its transaction first;
-- the one-call statement leaves the wake-up due only when the session had not turned it off.
SELECT quick.notify_consumers()
  FROM (SELECT pg_catalog.set_config('quick.wake_consumers', 'on', true) AS mode) w
 WHERE w.mode IS NOT NULL
