-- Algorithm 2, lines 1-6, for a batch of zones (see quick.lease_and_dequeue). Intervals and
-- times travel as microseconds.
SELECT kind, tenant, pointer_lease_id::text, item_id, job_type, priority, item_lease_id::text,
       error_count, payload::text, client_item_id, last_error,
       (extract(epoch FROM enqueued_at) * 1000000)::bigint AS enqueued_at_us,
       (extract(epoch FROM ready_lag) * 1000000)::bigint AS ready_lag_us,
       (extract(epoch FROM age) * 1000000)::bigint AS age_us
  FROM quick.lease_and_dequeue($1::text[], $2::interval, $3, $4::interval, $5::text[])
