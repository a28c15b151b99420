-- The handshake that lets a one-call enqueue skip its wake-up while every listening Scanner is
-- awake (docs/consumer.md#skipping-the-wake-up-while-every-scanner-is-awake). Two advisory locks
-- of quick-pg's own in each database (keys 487085218668 and 487085218669, beside the migrations'
-- 487085218667):
--   the sleepers' lock   a listening Scanner holds it SHARED, on its session, from just before it
--                        goes to sleep until it has been busy for a few rounds (quick.scanner_sleeps
--                        and quick.scanner_wakes);
--   the barrier          a one-call enqueue that skips its wake-up holds it SHARED until it
--                        commits (quick.notify_consumers, mode one_call); a Scanner about to sleep
--                        takes it EXCLUSIVE for a moment, so it waits for every such enqueue to
--                        commit, and only then scans once more and sleeps.
-- So an enqueue that finds the sleepers' lock free (no Scanner asleep, none between its barrier
-- and its sleep) leaves its item to Scanners that will scan again: one that is awake now can go
-- to sleep only through the barrier, after this enqueue's commit, and its last scan comes after
-- that. Any failure to take a lock counts as "someone may be asleep": the enqueue notifies.

-- A listening Scanner is about to sleep: waits (at most 5 ms for each lock) for the one-call
-- enqueues that skipped their wake-up to commit, then holds the sleepers' lock. Returns false,
-- holding neither lock, when a wait ran out (an enqueue's transaction still open, or a session
-- holding the sleepers' lock exclusively): the Scanner then polls instead of sleeping. The caller
-- scans once more after it returns true.
CREATE OR REPLACE FUNCTION quick.scanner_sleeps()
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '50ms' AS $$
BEGIN
    BEGIN
        PERFORM pg_catalog.pg_advisory_lock(487085218668);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;
    END;
    BEGIN
        PERFORM pg_catalog.pg_advisory_lock_shared(487085218669);
    EXCEPTION WHEN lock_not_available THEN
        PERFORM pg_catalog.pg_advisory_unlock(487085218668);
        RETURN false;
    END;
    PERFORM pg_catalog.pg_advisory_unlock(487085218668);
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION quick.scanner_sleeps() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.scanner_sleeps() TO quick_consumer, quick_admin;

-- The Scanner is awake again (it has been selecting work): one-call enqueues may skip their
-- wake-ups once every other Scanner is awake too.
CREATE OR REPLACE FUNCTION quick.scanner_wakes()
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
    SELECT pg_catalog.pg_advisory_unlock_shared(487085218669)
$$;
REVOKE ALL ON FUNCTION quick.scanner_wakes() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.scanner_wakes() TO quick_consumer, quick_admin;
