-- Acknowledge processed items in one statement. For each item, with its lease id, one action:
--   'complete'  delete it (done);
--   'retry'     requeue: vests again after delay, error_count + failed attempts, error recorded,
--               lease released;
--   'release'   give the lease back without counting an error (vests after delay);
--   'dead'      move it to quick.dead_items with error as the reason (error_count + failed attempts);
--   'delete'    delete it without keeping it (permanent failure, policy "delete").
-- failed_attempts (default: 1 each) counts the failures being recorded, in-line retries included.
-- Every action is conditional on the lease, so acknowledging twice (after an in-doubt commit) is
-- harmless: the second time reports lease_lost or item_gone. Returns an outcome per input item.
-- Items that vest again (retry, release) may vest before their zone's pointer, which was settled
-- while they were leased: quick.request_pointer_pulls takes care of that, as enqueue does.
CREATE OR REPLACE FUNCTION quick.ack_items(item_ids bigint[], lease_ids uuid[], actions text[],
                                           delays interval[], errors text[], failed_attempts integer[] DEFAULT NULL)
RETURNS TABLE (item_id bigint, outcome quick.outcome)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET jit = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    now_ts          timestamptz := statement_timestamp();
    bad_action      text;
    failures        integer[];
    done_ids        bigint[];
    vesting_tenants text[];
    vesting_times   timestamptz[];
    vesting_prios   integer[];
BEGIN
    PERFORM quick.check_not_null(item_ids IS NULL, 'item_ids', 'quick.ack_items');
    PERFORM quick.check_not_null(lease_ids IS NULL, 'lease_ids', 'quick.ack_items');
    PERFORM quick.check_not_null(actions IS NULL, 'actions', 'quick.ack_items');
    PERFORM quick.check_not_null(delays IS NULL, 'delays', 'quick.ack_items');
    PERFORM quick.check_not_null(errors IS NULL, 'errors', 'quick.ack_items');
    failures := coalesce(failed_attempts, array_fill(1, ARRAY[cardinality(item_ids)]));
    PERFORM quick.check_argument(
        cardinality(item_ids) = cardinality(lease_ids) AND cardinality(item_ids) = cardinality(actions)
        AND cardinality(item_ids) = cardinality(delays) AND cardinality(item_ids) = cardinality(errors)
        AND cardinality(item_ids) = cardinality(failures),
        'quick.ack_items: all arrays must have the same length');
    -- A retry or release vests again after its delay, bounded like every other delay.
    PERFORM quick.check_interval(d, 'delays[' || n || ']', 'quick.ack_items', true, l.max_vesting_delay,
                                 'max_vesting_delay')
       FROM unnest(delays) WITH ORDINALITY u(d, n)
       LEFT JOIN quick.limits l ON true  -- without its row, quick.check_interval raises
      WHERE u.d IS NOT NULL
        -- quick.check_interval's comparisons: as intervals, then (CASE: only then, no overflow) by
        -- the time the delay gives.
        AND NOT CASE WHEN u.d BETWEEN interval '0' AND l.max_vesting_delay
                     THEN now_ts + u.d >= now_ts
                          AND (now_ts + u.d <= now_ts + l.max_vesting_delay
                               OR (now_ts + u.d) - now_ts <= l.max_vesting_delay)
                     ELSE false END;
    -- The common case, every item done: one DELETE.
    IF 'complete' = ALL (actions) THEN
        RETURN QUERY
        WITH deleted AS (
            -- `i.id = ANY (item_ids)` as well: the rows are then reached through the primary key
            -- whatever the plan (a generic plan made when quick.items looked small could join
            -- by a full index scan: 12,500 buffers per call with a snapshot held open).
            DELETE FROM quick.items i USING unnest(item_ids, lease_ids) u(id, lease)
             WHERE i.id = u.id AND i.lease_id = u.lease AND i.id = ANY (item_ids)
            RETURNING i.id)
        SELECT u.id,
               CASE WHEN EXISTS (SELECT 1 FROM deleted d WHERE d.id = u.id) THEN 'done'::quick.outcome
                    WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = u.id) THEN 'lease_lost'::quick.outcome
                    ELSE 'item_gone'::quick.outcome END
          FROM unnest(item_ids) u(id);
        RETURN;
    END IF;

    SELECT a INTO bad_action FROM unnest(actions) a
     WHERE a IS NULL OR a NOT IN ('complete', 'retry', 'release', 'dead', 'delete') LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('quick.ack_items: unknown action %s (complete, retry, release, dead, delete)',
                             coalesce(quote_literal(bad_action), 'NULL'));
    END IF;

    WITH input AS (
        SELECT u.id, u.lease, u.action, coalesce(u.delay, interval '0') AS delay, u.error,
               greatest(coalesce(u.failures, 1), 0) AS failures
          FROM unnest(item_ids, lease_ids, actions, delays, errors, failures)
               u(id, lease, action, delay, error, failures)),
    deleted AS (
        DELETE FROM quick.items i USING input
         WHERE i.id = input.id AND i.lease_id = input.lease AND i.id = ANY (item_ids)
           AND input.action IN ('complete', 'dead', 'delete')
        RETURNING i.*, input.action, input.error AS reason, input.failures),
    buried AS (
        INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload,
                                      enqueued_at, client_item_id, last_error, died_at, reason)
        SELECT d.id, d.tenant, d.job_type, d.priority, d.error_count + d.failures, d.payload,
               d.enqueued_at, d.client_item_id, d.last_error, now_ts, coalesce(d.reason, 'permanent failure')
          FROM deleted d WHERE d.action = 'dead'
        ON CONFLICT (id) DO NOTHING
        RETURNING id),
    updated AS (
        UPDATE quick.items i
           SET vesting_time = now_ts + input.delay, zone_time = now_ts + input.delay, lease_id = NULL,
               error_count = CASE WHEN input.action = 'retry' THEN i.error_count + input.failures
                                  ELSE i.error_count END,
               last_error = CASE WHEN input.action = 'retry' THEN coalesce(input.error, i.last_error)
                                 ELSE i.last_error END
          FROM input
         WHERE i.id = input.id AND i.lease_id = input.lease AND i.id = ANY (item_ids)
           AND input.action IN ('retry', 'release')
        RETURNING i.id, i.tenant, i.vesting_time, i.priority)
    SELECT coalesce((SELECT array_agg(d.id) FROM deleted d), '{}') ||
           coalesce((SELECT array_agg(u.id) FROM updated u), '{}'),
           coalesce((SELECT array_agg(u.tenant) FROM updated u), '{}'),
           coalesce((SELECT array_agg(u.vesting_time) FROM updated u), '{}'),
           coalesce((SELECT array_agg(u.priority) FROM updated u), '{}')
      INTO done_ids, vesting_tenants, vesting_times, vesting_prios;

    IF cardinality(vesting_tenants) > 0 THEN
        PERFORM quick.request_pointer_pulls(vesting_tenants, vesting_times, vesting_prios);
    END IF;

    RETURN QUERY
    SELECT u.id,
           CASE WHEN u.id = ANY (done_ids) THEN 'done'::quick.outcome
                WHEN EXISTS (SELECT 1 FROM quick.items i WHERE i.id = u.id) THEN 'lease_lost'::quick.outcome
                ELSE 'item_gone'::quick.outcome END
      FROM unnest(item_ids) u(id);
END
$$;
REVOKE ALL ON FUNCTION quick.ack_items(bigint[],uuid[],text[],interval[],text[],integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quick.ack_items(bigint[],uuid[],text[],interval[],text[],integer[]) TO quick_consumer, quick_admin;
