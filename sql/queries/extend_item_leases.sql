-- Extend the leases of held items ($1 ids, $2 lease ids) by $3; returns those extended (busy
-- false) and those skipped because their row is locked right now (busy true).
SELECT item_id, lease_expires_at IS NULL AS busy FROM quick.extend_item_leases($1::bigint[], $2::uuid[], $3::interval)
