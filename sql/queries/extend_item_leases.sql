-- Extend the leases of running items ($1 ids, $2 lease ids) by $3; returns those extended.
SELECT item_id FROM quick.extend_item_leases($1::bigint[], $2::uuid[], $3::interval)
