-- Lease the named vested pointers ($1 text[]) for $2; returns the ones won.
SELECT tenant, lease_id::text, (extract(epoch FROM last_active_time) * 1000000)::bigint
  FROM quick.lease_pointers($1::text[], $2::interval)
