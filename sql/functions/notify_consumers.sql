-- Wakes idle consumers (docs/consumer.md#waking-up): NOTIFY on channel quick_wakeup, delivered
-- when the caller's transaction commits, unless the transaction set quick.wake_consumers = off
-- (or false)
-- (one that will be prepared: PREPARE TRANSACTION refuses a transaction that notified). Called
-- where producers make work vest earlier than the Scanners know: the wake_consumers triggers (a
-- new pointer, a pull request) and the fast paths' pulls in the caller's transaction. Anyone may
-- send this notification (Postgres has no privilege for NOTIFY): it costs a Scanner one scan.
CREATE OR REPLACE FUNCTION quick.notify_consumers()
RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
    SELECT pg_catalog.pg_notify('quick_wakeup', '')
     WHERE pg_catalog.lower(pg_catalog.current_setting('quick.wake_consumers', true)) IS DISTINCT FROM 'off'
       AND pg_catalog.lower(pg_catalog.current_setting('quick.wake_consumers', true)) IS DISTINCT FROM 'false';
$$;
REVOKE ALL ON FUNCTION quick.notify_consumers() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.notify_consumers() TO quick_producer, quick_consumer, quick_admin;
