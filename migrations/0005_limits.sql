-- quick-pg schema version 5: limits that hold for every caller, pull requests served oldest
-- first, and a back-off for pointers a producer's open transaction keeps from being settled.
--
-- Apply with: quick migrate, or psql (README: the order, functions and views included). One
-- transaction; refuses to run twice. Never edit it once released.

BEGIN;

SELECT pg_advisory_xact_lock(487085218667);

DO $guard$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 4) THEN
        RAISE EXCEPTION 'quick migration 0005 needs migration 0004 first' USING ERRCODE = 'undefined_object';
    END IF;
    IF EXISTS (SELECT 1 FROM quick.schema_migrations WHERE version = 5) THEN
        RAISE EXCEPTION 'quick migration 0005 is already applied to database %', current_database()
            USING ERRCODE = 'duplicate_object';
    END IF;
END
$guard$;

-- The limits the SQL functions enforce, one row. They were a session setting
-- (quick.max_payload_bytes), which any caller could raise for itself; a table only the
-- administrators may write holds for everyone (docs/security.md). Change one with, e.g.:
--   UPDATE quick.limits SET max_payload_bytes = 4194304;
-- Every duration an SQL function takes is bounded by one of these, so that no lease, delay or
-- parked pointer can push work out of reach.
CREATE TABLE quick.limits (
    singleton         boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
    -- Bytes of the payload's JSON text (octet_length(payload::text)).
    max_payload_bytes integer  NOT NULL DEFAULT 1048576
                      CHECK (max_payload_bytes BETWEEN 2 AND 268435456),
    -- Enqueue's vesting_delay, requeue's and release's delays.
    max_vesting_delay interval NOT NULL DEFAULT '1 year'
                      CHECK (max_vesting_delay > interval '0' AND max_vesting_delay <= interval '100 years'),
    -- An item lease (obtain_lease, dequeue, extend_lease, visits).
    max_item_lease    interval NOT NULL DEFAULT '1 day'
                      CHECK (max_item_lease > interval '0' AND max_item_lease <= interval '30 days'),
    -- A pointer lease (lease_pointers, lease_next_pointers). An enqueue into a zone whose pointer
    -- vests later than now + this pulls it in, leased or not.
    max_pointer_lease interval NOT NULL DEFAULT '10 minutes'
                      CHECK (max_pointer_lease > interval '0' AND max_pointer_lease <= interval '1 day'),
    -- A consumer role lease (claim_role).
    max_role_lease    interval NOT NULL DEFAULT '10 minutes'
                      CHECK (max_role_lease > interval '0' AND max_role_lease <= interval '1 day'),
    -- How long an empty zone's pointer may be parked before it is collected (min_inactive).
    max_min_inactive  interval NOT NULL DEFAULT '1 day'
                      CHECK (max_min_inactive >= interval '0' AND max_min_inactive <= interval '30 days')
);

-- A database that set quick.max_payload_bytes (ALTER DATABASE / ALTER ROLE ... SET) keeps its
-- value, as this session sees it; the setting itself no longer has any effect.
INSERT INTO quick.limits (max_payload_bytes)
SELECT CASE WHEN coalesce(current_setting('quick.max_payload_bytes', true), '') ~ '^[0-9]{1,9}$'
                 AND current_setting('quick.max_payload_bytes', true)::integer BETWEEN 2 AND 268435456
            THEN current_setting('quick.max_payload_bytes', true)::integer
            ELSE 1048576 END;

-- quick.max_payload_bytes() used it to reject a malformed setting; quick.limits replaces both.
DROP FUNCTION IF EXISTS quick.invalid_setting(text, text);
-- Replaced by checks that also take the limits: quick.check_new_item with the limits row, and
-- quick.check_interval (sql/functions/argument_checks.sql).
DROP FUNCTION IF EXISTS quick.check_new_item(text, text, jsonb, interval, text, integer, text);
DROP FUNCTION IF EXISTS quick.check_positive_interval(interval, text, text);

-- Consecutive visits that found nothing to take in the zone and could not settle its pointer,
-- because an enqueuer's open transaction holds it (FOR KEY SHARE). Each such visit vests the
-- pointer a little later (quick.busy_settle_delay), so an idle-in-transaction producer does not
-- make every Scanner round rewrite the pointer. Not indexed: the update stays HOT-eligible.
ALTER TABLE quick.pointers ADD COLUMN busy_settles smallint NOT NULL DEFAULT 0;

-- Pull requests are applied oldest first.
CREATE INDEX pointer_pulls_requested ON quick.pointer_pulls (requested_at);

INSERT INTO quick.schema_migrations (version, name) VALUES (5, 'limits');

COMMIT;
