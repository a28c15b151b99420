-- A pull request for item $1's zone, to vest its pointer no later than the item (applied by a
-- consumer after the caller's commit).
INSERT INTO quick.pointer_pulls (tenant, vesting_time)
SELECT tenant, vesting_time FROM quick.items WHERE id = $1
