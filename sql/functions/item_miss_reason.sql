-- Why a conditional operation on an item matched nothing.
CREATE OR REPLACE FUNCTION quick.item_miss_reason(item_id bigint)
RETURNS quick.outcome LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = item_miss_reason.item_id)
                THEN 'lease_lost'::quick.outcome ELSE 'item_gone'::quick.outcome END
$$;
REVOKE ALL ON FUNCTION quick.item_miss_reason(bigint) FROM PUBLIC;
