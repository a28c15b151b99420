-- Vested items of one zone, without leasing them. Times travel as epoch microseconds.
SELECT id, tenant, job_type, priority, lease_id::text, error_count, payload::text,
       client_item_id, last_error,
       (extract(epoch FROM vesting_time) * 1000000)::bigint AS vesting_time_us,
       (extract(epoch FROM enqueued_at) * 1000000)::bigint AS enqueued_at_us
  FROM quick.peek($1, $2, $3)
