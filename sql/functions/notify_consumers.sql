-- Wakes idle consumers (docs/consumer.md#waking-up): NOTIFY on channel quick_wakeup, delivered
-- when the caller's transaction commits. quick.wake_consumers, set by the transaction, changes
-- that:
--   off (or false)  nothing is sent: for a transaction that will be prepared (PREPARE TRANSACTION
--                   refuses one that notified);
--   after_commit    nothing is sent; quick.wakeup_due is set to on (for the transaction) and the
--                   caller sends the notification once its transaction has committed, in a
--                   transaction of its own. The C++ one-call enqueue does this: a transaction that
--                   notifies commits under a server-wide lock held through its WAL flush, so
--                   notifying inside every enqueue's transaction serializes their commits
--                   (docs/benchmarks.md#9-wake-up); a transaction that only notifies writes
--                   just its commit record, does not wait for it to be flushed, and so holds
--                   that lock for a moment.
--   one_call        as after_commit, for the one-call statements only (enqueue_now.sql sets it for
--                   their own transaction): not even due while every listening Scanner is awake
--                   (sql/functions/scanner_sleep.sql).
-- Called where producers make work vest earlier than the Scanners know: the wake_consumers
-- triggers (a new pointer, a pull request) and the fast paths' pulls in the caller's transaction.
-- Anyone may send this notification (Postgres has no privilege for NOTIFY): it costs a Scanner
-- one scan.
--
-- One notification per transaction, its payload the start of the statement that sent it (the
-- transaction's first, so its earliest), in microseconds since the epoch. What the transaction
-- wrote carries that statement's start time or a later one, and becomes visible only when it
-- commits, which is when Postgres delivers the notification: a transaction that ran longer than
-- the margin below the Scanner's wide floor would otherwise wait for its next full scan; the
-- Scanner's next wide scan reaches back to the payload instead (src/scanner/scan_floors.h).
CREATE OR REPLACE FUNCTION quick.notify_consumers()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    mode text := pg_catalog.lower(pg_catalog.current_setting('quick.wake_consumers', true));
BEGIN
    IF mode IN ('off', 'false') THEN
        RETURN;
    ELSIF mode = 'after_commit' THEN
        PERFORM pg_catalog.set_config('quick.wakeup_due', 'on', true);
    ELSIF mode = 'one_call' THEN
        -- The one-call statements' own mode (set for their transaction only): as after_commit,
        -- but skipped while no listening Scanner sleeps (sql/functions/scanner_sleep.sql): the
        -- barrier, held until this transaction commits, then the sleepers' lock, tried and let go
        -- in one expression (a cancel between two statements would leave it held by the session).
        IF pg_catalog.current_setting('quick.wakeup_due', true) IS NOT DISTINCT FROM 'on' THEN
            RETURN;  -- due already (a batch's earlier zone)
        END IF;
        IF pg_catalog.pg_try_advisory_xact_lock_shared(487085218668) THEN
            IF pg_catalog.pg_try_advisory_lock(487085218669) AND pg_catalog.pg_advisory_unlock(487085218669) THEN
                RETURN;
            END IF;
        END IF;
        PERFORM pg_catalog.set_config('quick.wakeup_due', 'on', true);
    ELSIF pg_catalog.current_setting('quick.wakeup_sent', true) IS DISTINCT FROM pg_catalog.pg_current_xact_id()::text THEN
        -- The transaction's id, not 'on': a session-wide SET of the name cannot mute a session.
        PERFORM pg_catalog.set_config('quick.wakeup_sent', pg_catalog.pg_current_xact_id()::text, true);
        PERFORM pg_catalog.pg_notify('quick_wakeup',
                                     (EXTRACT(epoch FROM pg_catalog.statement_timestamp()) * 1000000)::bigint::text);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.notify_consumers() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.notify_consumers() TO quick_producer, quick_consumer, quick_admin;
