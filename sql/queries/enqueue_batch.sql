-- Several items in one statement; $1 is a JSON array of item objects.
SELECT ordinal, item_id, duplicate FROM quick.enqueue_batch($1::jsonb) ORDER BY ordinal
