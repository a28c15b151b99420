-- Acknowledge processed items in one statement (see quick.ack_items).
SELECT item_id, outcome::text
  FROM quick.ack_items($1::bigint[], $2::uuid[], $3::text[], $4::interval[], $5::text[], $6::integer[])
