-- The Scanner selects work again: it lets the sleepers' lock go (sql/functions/scanner_sleep.sql).
SELECT quick.scanner_wakes()
