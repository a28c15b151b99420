-- Lease up to $1 vested pointers in vesting order, for $2 (the in-order Scanner).
SELECT tenant, lease_id::text, (extract(epoch FROM last_active_time) * 1000000)::bigint
  FROM quick.lease_next_pointers($1, $2::interval)
