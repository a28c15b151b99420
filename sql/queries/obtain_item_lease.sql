SELECT outcome::text, lease_id::text, (extract(epoch FROM lease_expires_at) * 1000000)::bigint
  FROM quick.obtain_lease($1, $2::interval)
