-- The row triggers wake_consumers, AFTER INSERT on quick.pointers and quick.pointer_pulls: a new
-- pointer (a zone that was empty) and a pull request (an item that vests before its parked
-- zone's pointer) make work vest sooner than the Scanners know; their peeks tell them when the
-- next pointer vests, so nothing else needs announcing. An enqueue into a zone whose pointer is
-- already due sends nothing: a NOTIFY serializes committing transactions on a server-wide lock,
-- too costly for every enqueue. Row triggers fire only for rows actually inserted (an INSERT ...
-- SELECT of nothing, or an ON CONFLICT DO NOTHING that skipped, sends nothing), and
-- quick.notify_consumers sends one per transaction; it also says who may turn it off and why.
--
-- The triggers are defined here, with their function, and re-created by every quick migrate, as
-- the views are: they hold no data, so the one live definition can sit beside the function.
CREATE OR REPLACE FUNCTION quick.wake_consumers()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM quick.notify_consumers();
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION quick.wake_consumers() FROM PUBLIC;

CREATE OR REPLACE TRIGGER wake_consumers AFTER INSERT ON quick.pointers
    FOR EACH ROW EXECUTE FUNCTION quick.wake_consumers();
CREATE OR REPLACE TRIGGER wake_consumers AFTER INSERT ON quick.pointer_pulls
    FOR EACH ROW EXECUTE FUNCTION quick.wake_consumers();
