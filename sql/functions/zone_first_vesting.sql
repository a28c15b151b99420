-- The earliest vesting time in a zone (NULL when it is empty): when its pointer should vest next.
--
-- The zone index orders items by (priority, zone_time), and zone_time <= vesting_time, equal for
-- an item at rest (not leased); a leased item keeps its place and vests when its lease runs out
-- (docs/protocol.md#zone-time-and-leases). So per priority in use the earliest vesting time is the
-- first item at rest, or a leased item before it, whose place is earlier but whose vesting time
-- may be later or earlier; a leased item after the first at rest vests after it. Each priority is
-- read from its first entry to its first item at rest, never the whole zone; the priorities in
-- use are found with one index probe each (a loose index scan), so zones of millions of items
-- cost the same.
CREATE OR REPLACE FUNCTION quick.zone_first_vesting(zone text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
-- plpgsql rather than sql: its plan is prepared once per session, not at every call.
DECLARE
    first timestamptz;
BEGIN
    WITH RECURSIVE prios AS (
        (SELECT i.priority FROM quick.items i
          WHERE i.tenant = zone ORDER BY i.priority, i.zone_time LIMIT 1)
        UNION ALL
        SELECT next.priority
          FROM prios f
          CROSS JOIN LATERAL (
                SELECT i.priority FROM quick.items i
                 WHERE i.tenant = zone AND i.priority > f.priority
                 ORDER BY i.priority, i.zone_time LIMIT 1) next)
    SELECT min(least(r.zone_time, l.vesting_time)) INTO first
      FROM prios p
      -- The first item at rest of the priority.
      LEFT JOIN LATERAL (
            SELECT i.zone_time FROM quick.items i
             WHERE i.tenant = zone AND i.priority = p.priority AND i.vesting_time = i.zone_time
             ORDER BY i.zone_time LIMIT 1) r ON true
      -- The leased items before it.
      LEFT JOIN LATERAL (
            SELECT min(i.vesting_time) AS vesting_time FROM quick.items i
             WHERE i.tenant = zone AND i.priority = p.priority AND i.zone_time <= coalesce(r.zone_time, 'infinity')
               AND i.vesting_time <> i.zone_time) l ON true;
    RETURN first;
END
$$;
REVOKE ALL ON FUNCTION quick.zone_first_vesting(text) FROM PUBLIC;
