-- Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
-- The one-call enqueues' wake-up, in a transaction of its own after their statement committed
-- with wakeup_due (enqueue_now.sql). A bare NOTIFY on quick.notify_consumers's channel, not a
-- call of that function: the one-call statement leaves the wake-up due only when the session had
-- not turned notifications off, so there is no setting left to consult here, and a function call
-- with a set_config in this extra transaction cost the many-tenant steady load 8% of its
-- throughput (docs/benchmarks.md#the-one-call-enqueues-wake-up-a-bare-notify).
NOTIFY quick_wakeup
