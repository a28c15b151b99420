-- One item, inside the caller's transaction (the protocol lives in quick.enqueue).
SELECT item_id, duplicate FROM quick.enqueue($1, $2, $3::jsonb, $4::interval, $5, $6)
