-- Algorithm 2 for a batch of zones in one transaction (see quick.visit_zones). Intervals and
-- times travel as microseconds.
SELECT kind, tenant, action, item_id, job_type, priority, item_lease_id::text, error_count,
       payload::text, client_item_id, last_error,
       (extract(epoch FROM enqueued_at) * 1000000)::bigint AS enqueued_at_us,
       (extract(epoch FROM ready_lag) * 1000000)::bigint AS ready_lag_us,
       (extract(epoch FROM age) * 1000000)::bigint AS age_us,
       (extract(epoch FROM pointer_lag) * 1000000)::bigint AS pointer_lag_us
  FROM quick.visit_zones($1::text[], $2, $3::interval, $4::interval, $5::text[], $6::bigint)
