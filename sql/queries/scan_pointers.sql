-- Apply pending pull requests, then peek vested pointers in vesting order (one round trip). The
-- last row (tenant NULL) carries the number of pointers the pulls moved. now_us: the database
-- clock, against which the Scanner measures how long each pointer has been vested.
SELECT tenant, (extract(epoch FROM vesting_time) * 1000000)::bigint AS vesting_time_us, pulled,
       (extract(epoch FROM statement_timestamp()) * 1000000)::bigint AS now_us
  FROM quick.scan_pointers($1, $2)
