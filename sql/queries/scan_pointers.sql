-- Apply pending pull requests, then peek vested pointers in vesting order (one round trip). The
-- first row (tenant NULL) carries the number of pointers the pulls moved.
SELECT tenant, (extract(epoch FROM vesting_time) * 1000000)::bigint AS vesting_time_us, pulled
  FROM quick.scan_pointers($1, $2)
