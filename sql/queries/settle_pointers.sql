-- Requeue, park or garbage-collect leased pointers after a visit. Must run in READ COMMITTED.
SELECT tenant, action, (extract(epoch FROM next_vesting_time) * 1000000)::bigint
  FROM quick.settle_pointers($1::text[], $2::uuid[], $3::boolean[], $4::interval)
