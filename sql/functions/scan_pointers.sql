-- The Scanner's one call per scan (Algorithm 1, line 6): apply the pending pull requests
-- (earlier items enqueued into parked zones, retries, releases), then peek up to max_pointers
-- vested pointers in vesting order, from the pointers_vesting index. The last row, with a NULL
-- tenant, says how many pointers the pulls moved, and in vesting_time: now when pull requests are
-- left that this call could not apply (their pointers locked, or another Scanner applying them
-- right now), whether or not the peek found vested pointers (but for a full scan, one without a
-- requested_from floor, that found some); otherwise, when the peek found nothing vested, when
-- the next pointer vests (NULL: none). An idle or busy Scanner looks again soon after a scan
-- that left requests (docs/consumer.md#waking-up). requested_from and vested_from (NULL: from
-- the beginning) are the Scanner's floors for the two reads (docs/consumer.md#scanning-from-a-floor).
-- next_vesting_within bounds the read of the next vesting time: only a pointer that vests within
-- it from now is reported (NULL: no bound; zero: none is read). The Scanner passes how long it
-- could sleep at most: whatever vests later it looks for again before then, and under an old
-- snapshot the read steps over every dead pointer version between now and the pointer it finds.
CREATE OR REPLACE FUNCTION quick.scan_pointers(max_pointers integer, max_pulls integer DEFAULT 10000,
                                              requested_from timestamptz DEFAULT NULL,
                                              vested_from timestamptz DEFAULT NULL,
                                              next_vesting_within interval DEFAULT NULL)
RETURNS TABLE (tenant text, vesting_time timestamptz, pulled integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    pending       boolean;
    peeked_vested boolean;
    left_over     boolean := false;
BEGIN
    PERFORM quick.check_argument(max_pointers >= 0,
        'quick.scan_pointers: max_pointers must be zero or positive, got %s', coalesce(max_pointers::text, 'NULL'));
    PERFORM quick.check_argument(max_pulls > 0,
        'quick.scan_pointers: max_pulls must be positive, got %s', coalesce(max_pulls::text, 'NULL'));
    PERFORM quick.check_argument(next_vesting_within IS NULL OR next_vesting_within BETWEEN interval '0' AND interval '1000 years',
        'quick.scan_pointers: next_vesting_within must be zero to 1000 years (NULL: no bound), got %s',
        next_vesting_within::text);
    -- Usually there is nothing to apply: one look at the requests, and neither the apply (which
    -- does not look first itself) nor the look for left-overs below walks them again (under a
    -- long snapshot, every dead request since the floor is one more heap fetch per walk).
    pending := EXISTS (SELECT 1 FROM quick.pointer_pulls r WHERE r.requested_at >= coalesce(requested_from, '-infinity'));
    pulled := CASE WHEN pending THEN quick.apply_pointer_pulls(max_pulls, requested_from) ELSE 0 END;
    RETURN QUERY SELECT p.tenant, p.vesting_time, NULL::integer FROM quick.peek_pointers(max_pointers, vested_from) p;
    peeked_vested := FOUND;
    -- Requests left, vested pointers or not: when another Scanner is applying them, its pulls vest
    -- a moment from now, and no notification says so (the enqueue's went to both). Beside vested
    -- pointers, only from a floor: a full scan (no floor) has walked every request since the
    -- oldest snapshot twice already, which under a long one is many dead entries; the Scanner's
    -- next wide scan reports what is left above its floor.
    IF pending AND (NOT peeked_vested OR requested_from IS NOT NULL) THEN
        left_over := EXISTS (SELECT 1 FROM quick.pointer_pulls r
                              WHERE r.requested_at >= coalesce(requested_from, '-infinity'));
    END IF;
    IF left_over THEN
        RETURN QUERY SELECT NULL::text, statement_timestamp(), pulled;
    ELSIF peeked_vested THEN
        -- Vested pointers: a Scanner does not sleep long on a busy queue, and during a drain the
        -- index entries past now are mostly dead versions of leased pointers: not worth reading.
        RETURN QUERY SELECT NULL::text, NULL::timestamptz, pulled;
    ELSE
        -- Both bounds are index conditions: no bound is a bound past any vesting time the limits
        -- allow (an OR with a NULL test would make the upper one a filter in the generic plan).
        RETURN QUERY SELECT NULL::text,
            (SELECT min(p.vesting_time) FROM quick.pointers p
              WHERE p.vesting_time > statement_timestamp()
                AND p.vesting_time <= statement_timestamp() + coalesce(next_vesting_within, interval '1000 years')),
            pulled;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION quick.scan_pointers(integer,integer,timestamp with time zone,timestamp with time zone,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.scan_pointers(integer,integer,timestamp with time zone,timestamp with time zone,interval) TO quick_consumer, quick_admin;
