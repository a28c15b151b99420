-- Apply pending pull requests, then peek vested pointers in vesting order (one round trip). The
-- last row (tenant NULL) carries the number of pointers the pulls moved. now_us: the database
-- clock, against which the Scanner measures how long each pointer has been vested. $3 and $4: the
-- Scanner's floors for the pull requests and the peek, in microseconds since the epoch (0: none,
-- read from the beginning). $5: how far ahead to read the next vesting time, in microseconds
-- (negative: no bound). Run on its own (autocommit), its transaction commits without waiting for
-- the WAL flush, as a visit's does: pulls it applied and a crash lost are pull requests again
-- (docs/protocol.md#durability-of-a-consumers-commits).
SELECT tenant, (extract(epoch FROM vesting_time) * 1000000)::bigint AS vesting_time_us, pulled,
       (extract(epoch FROM statement_timestamp()) * 1000000)::bigint AS now_us
  FROM (SELECT pg_catalog.set_config('synchronous_commit', 'off', true) AS async_commit) c,
       quick.scan_pointers($1, $2,
                           CASE WHEN $3::bigint > 0 THEN timestamptz 'epoch' + $3::bigint * interval '1 microsecond' END,
                           CASE WHEN $4::bigint > 0 THEN timestamptz 'epoch' + $4::bigint * interval '1 microsecond' END,
                           CASE WHEN $5::bigint >= 0 THEN $5::bigint * interval '1 microsecond' END)
 WHERE c.async_commit IS NOT NULL
