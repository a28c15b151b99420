SELECT outcome::text, (extract(epoch FROM lease_expires_at) * 1000000)::bigint
  FROM quick.extend_lease($1, $2::uuid, $3::interval)
