# The producer's fast-path functions (sql/functions/enqueue_into_existing_zone.sql and
# enqueue_batch_into_existing_zones.sql) without what issue 13's hardening added to them, created
# in a schema of their own by enqueue_floor.sh so that it can measure what the hardening costs:
# SECURITY DEFINER and its search_path, the tenant-login rule, and the limits read from
# quick.limits (here the defaults, as constants). Everything else, the protocol included, is the
# same statement for statement. enqueue_floor.sh refuses to run when a pattern no longer matches.
s/^CREATE OR REPLACE FUNCTION quick\./CREATE OR REPLACE FUNCTION unhardened./
/^REVOKE /d
/^GRANT /d
s/^LANGUAGE plpgsql VOLATILE SECURITY DEFINER$/LANGUAGE plpgsql VOLATILE/
/^SET search_path = pg_catalog, pg_temp$/d
/AND NOT EXISTS (SELECT 1 FROM quick\.tenant_logins t$/,/WHERE t\.login = session_user/d
/IF EXISTS (SELECT 1 FROM quick\.tenant_logins) THEN$/,/END IF;$/d
s/SELECT l\.max_payload_bytes, l\.max_vesting_delay, l\.max_pointer_lease FROM quick\.limits l)/SELECT 1048576 AS max_payload_bytes, interval '1 year' AS max_vesting_delay, interval '10 minutes' AS max_pointer_lease)/
s/limits      quick\.limits := quick\.current_limits();/limits      quick.limits := ROW(true, 1048576, interval '1 year', interval '1 day', interval '10 minutes', interval '10 minutes', interval '1 day', NULL);/
