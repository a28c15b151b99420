-- The database-level gauges of the metrics, one row per value (quick.queue_metrics).
SELECT metric, tenant, value FROM quick.queue_metrics($1, $2)
