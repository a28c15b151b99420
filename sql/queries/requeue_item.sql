SELECT quick.requeue($1, $2::uuid, $3::interval, $4)::text
