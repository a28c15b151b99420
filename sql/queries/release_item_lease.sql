SELECT quick.release_lease($1, $2::uuid, $3::interval)::text
