-- Algorithm 2 for a batch of zones in one transaction (see quick.visit_zones). Intervals and
-- times travel as microseconds. Run on its own (autocommit): its transaction commits without
-- waiting for the WAL flush (synchronous_commit = off for this transaction only). A visit lost in
-- a server crash is a visit that never happened: its items' leases and its pointers' settles are
-- gone together, the items vest again, and any later synchronous commit (an enqueue, an
-- acknowledgement) flushes it first, so nothing that depended on it survives without it
-- (docs/protocol.md#durability-of-a-consumers-commits).
SELECT kind, tenant, action, item_id, job_type, priority, item_lease_id::text, error_count,
       payload::text, client_item_id, last_error,
       (extract(epoch FROM enqueued_at) * 1000000)::bigint AS enqueued_at_us,
       (extract(epoch FROM ready_lag) * 1000000)::bigint AS ready_lag_us,
       (extract(epoch FROM age) * 1000000)::bigint AS age_us,
       (extract(epoch FROM pointer_lag) * 1000000)::bigint AS pointer_lag_us
  FROM (SELECT pg_catalog.set_config('synchronous_commit', 'off', true) AS async_commit) c,
       quick.visit_zones($1::text[], $2, $3::interval, $4::interval, $5::text[], $6::bigint)
 WHERE c.async_commit IS NOT NULL
