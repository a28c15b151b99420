-- $2 NULL cancels the item whatever its lease.
SELECT quick.complete($1, $2::uuid)::text
