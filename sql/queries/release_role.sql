SELECT coalesce(quick.release_role($1, $2), false)
