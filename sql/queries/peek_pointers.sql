-- Vested pointers in vesting order, from the pointers_vesting index alone.
SELECT tenant, (extract(epoch FROM vesting_time) * 1000000)::bigint AS vesting_time_us
  FROM quick.peek_pointers($1)
