-- One item without a client item id, committed on its own (quick::enqueue: one autocommit
-- statement). The common case through quick.enqueue_into_existing_zone, which also moves a parked
-- pointer at once (pull_in_transaction: this statement's transaction commits right after it, so
-- the pointer is held only that long). Only when that inserted nothing (a new zone, or an item
-- the database refuses) does quick.enqueue run: COALESCE stops at its first non-NULL argument,
-- and the subquery, an InitPlan, is evaluated only when COALESCE reaches it.
SELECT coalesce(quick.enqueue_into_existing_zone($1, $2, $3::jsonb, $4::interval, $5, true),
                (SELECT e.item_id FROM quick.enqueue($1, $2, $3::jsonb, $4::interval, $5) e)) AS item_id
