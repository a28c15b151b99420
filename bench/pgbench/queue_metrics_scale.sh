#!/usr/bin/env bash
# What the metrics' database gauges cost on a big queue: the measurement behind
# docs/operations.md#metrics. Builds a scratch database with the quick schema and N tenants
# (default 1,000,000), each with one item, every tenth with five (1.4 items per tenant on
# average), a pointer per zone, a mix of vested, delayed and leased items and 10,000 dead items;
# then times quick.queue_metrics (what each metrics round runs) with the default options
# (top_tenants 5, count_limit 10,000) and at count_limit 100,000, and, for comparison, the exact
# counts of the quick.queue_summary view.
#
# Usage: QUICK_DATABASE_URL="host=... port=... user=..." bench/pgbench/queue_metrics_scale.sh [tenants]
# (a keyword/value connection string: the scratch database is selected by appending dbname=).
# KEEP=1 keeps the scratch database (its name is printed) for more queries by hand.
# Needs a built `build/quick` (for `quick migrate`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
url=${QUICK_DATABASE_URL:?set QUICK_DATABASE_URL to a keyword/value connection string}
tenants=${1:-1000000}
quick=${QUICK_BUILD_DIR:-$root/build}/quick
[ -x "$quick" ] || { echo "$quick not found: build first (cmake --build build)" >&2; exit 1; }

db="quick_metrics_scale_$$"
psql "$url" -qAtc "CREATE DATABASE $db" >/dev/null
if [ "${KEEP:-0}" = 1 ]; then
  echo "scratch database: $db (KEEP=1: not dropped)"
else
  trap 'psql "$url" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null' EXIT
fi
dburl="$url dbname=$db"
"$quick" migrate --database "$dburl" >/dev/null

echo "generating $tenants tenants..."
psql "$dburl" -q -v ON_ERROR_STOP=1 -v tenants="$tenants" <<'SQL'
-- Items: vested over the last 10 minutes, except every 7th tenant's (delayed an hour) and every
-- 11th tenant's (leased: lease_id set, vesting when the lease runs out).
INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, lease_id, payload, enqueued_at)
SELECT 'tenant' || t, 'job' || (t % 5), 0,
       CASE WHEN t % 7 = 0 THEN now() + interval '1 hour'
            WHEN t % 11 = 0 THEN now() + interval '1 hour'
            ELSE now() - (t % 600) * interval '1 second' END,
       CASE WHEN t % 7 = 0 THEN now() + interval '1 hour'
            ELSE now() - (t % 600) * interval '1 second' END,
       CASE WHEN t % 11 = 0 AND t % 7 <> 0 THEN gen_random_uuid() END,
       jsonb_build_object('n', k), now() - interval '10 minutes'
  FROM generate_series(1, :tenants) t, generate_series(1, CASE WHEN t % 10 = 0 THEN 5 ELSE 1 END) k;
-- Every non-empty zone has a pointer, vesting with its first item.
INSERT INTO quick.pointers (tenant, vesting_time, last_active_time)
SELECT i.tenant, min(i.vesting_time), now() FROM quick.items i GROUP BY i.tenant;
INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, reason)
SELECT -d, 'tenant' || d, 'job', 0, 3, '{}', now(), 'bench' FROM generate_series(1, 10000) d;
VACUUM ANALYZE quick.items;
VACUUM ANALYZE quick.pointers;
VACUUM ANALYZE quick.dead_items;
SQL
psql "$dburl" -qAt -c "SELECT format('%s items, %s pointers, %s dead items; quick.items %s',
    (SELECT count(*) FROM quick.items), (SELECT count(*) FROM quick.pointers),
    (SELECT count(*) FROM quick.dead_items), pg_size_pretty(pg_total_relation_size('quick.items')))"

# Warm once, then EXPLAIN ANALYZE (a plpgsql function shows as one Function Scan: its total time
# is what a metrics round costs) and five timed calls.
for limit in 10000 100000; do
  echo
  echo "== quick.queue_metrics(5, $limit)"
  psql "$dburl" -qAt -c "SELECT count(*) FROM quick.queue_metrics(5, $limit)" >/dev/null
  psql "$dburl" -qAt -c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM quick.queue_metrics(5, $limit)"
  for _ in 1 2 3 4 5; do echo "SELECT count(*) FROM quick.queue_metrics(5, $limit);"; done |
    psql "$dburl" -qAt -c '\timing on' -f - | grep '^Time'
done
echo
echo "== its values (count_limit 10000)"
psql "$dburl" -qA -F ' ' -c "SELECT metric, tenant, round(value::numeric, 1) FROM quick.queue_metrics(5, 10000)"
echo
echo "== for comparison: the exact counts of quick.queue_summary"
psql "$dburl" -qAt -c "EXPLAIN (ANALYZE) SELECT * FROM quick.queue_summary" | tail -2
