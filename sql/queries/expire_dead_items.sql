-- Retention: delete up to $1 dead items older than quick.limits.dead_item_max_age.
SELECT quick.expire_dead_items($1)
