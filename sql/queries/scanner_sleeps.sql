-- A listening Scanner is about to sleep (sql/functions/scanner_sleep.sql): true once it holds the
-- sleepers' lock, false when enqueues that skipped their wake-up kept it waiting too long.
SELECT coalesce(quick.scanner_sleeps(), false)
