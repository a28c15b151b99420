-- The earliest vesting time in a zone (NULL when it is empty). The zone index is ordered by
-- (priority, vesting_time), so a plain min(vesting_time) would read every entry of the zone; this
-- reads the first entry of each distinct priority instead (a loose index scan: one index probe
-- per priority in use), which stays cheap for zones of millions of items.
CREATE OR REPLACE FUNCTION quick.zone_first_vesting(zone text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
-- plpgsql rather than sql: its plan is prepared once per session, not at every call.
DECLARE
    first timestamptz;
BEGIN
    WITH RECURSIVE firsts AS (
        (SELECT i.priority, i.vesting_time FROM quick.items i
          WHERE i.tenant = zone ORDER BY i.priority, i.vesting_time LIMIT 1)
        UNION ALL
        SELECT next.priority, next.vesting_time
          FROM firsts f
          CROSS JOIN LATERAL (
                SELECT i.priority, i.vesting_time FROM quick.items i
                 WHERE i.tenant = zone AND i.priority > f.priority
                 ORDER BY i.priority, i.vesting_time LIMIT 1) next)
    SELECT min(vesting_time) INTO first FROM firsts;
    RETURN first;
END
$$;
REVOKE ALL ON FUNCTION quick.zone_first_vesting(text) FROM PUBLIC;
