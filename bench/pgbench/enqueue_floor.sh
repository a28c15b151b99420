#!/usr/bin/env bash
# What a transaction of 100 enqueues into random tenants costs on Postgres, piece by piece: the
# measurements behind docs/benchmarks.md, "Batches of 100 enqueues". Each variant runs with
# pgbench (4 clients, one transaction per statement) against a scratch database that has the
# quick schema and 10,000 tenants; transactions/s are printed with the ratio to the bare insert.
#
# Usage: QUICK_DATABASE_URL="host=... port=... user=..." bench/pgbench/enqueue_floor.sh [seconds]
# (a keyword/value connection string: the scratch database is selected by appending dbname=).
# Needs a built `build/quick` (for `quick migrate`) and Postgres' pgbench (postgresql-15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
url=${QUICK_DATABASE_URL:?set QUICK_DATABASE_URL to a keyword/value connection string}
seconds=${1:-8}
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$pgbench" ] || { echo "pgbench not found (apt-get install postgresql-15)" >&2; exit 1; }
quick=${QUICK_BUILD_DIR:-$root/build}/quick
[ -x "$quick" ] || { echo "$quick not found: build first (cmake --build build)" >&2; exit 1; }

db="quick_enqueue_floor_$$"
psql "$url" -qAtc "CREATE DATABASE $db" >/dev/null
trap 'psql "$url" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null' EXIT
dburl="$url dbname=$db"
"$quick" migrate --database "$dburl" >/dev/null
psql "$dburl" -q -v ON_ERROR_STOP=1 -f "$here/setup.sql" >/dev/null

echo "100 rows per transaction, 4 clients, ${seconds} s per variant, $(date -u +%FT%TZ)"
printf '%-22s %10s %8s\n' variant "txn/s" "vs plain"
plain=""
for variant in plain items_no_zone_index items_shape lock_and_insert enqueue_batch; do
  tps=$("$pgbench" -n -c 4 -j 4 -T "$seconds" -f "$here/$variant.sql" "$dburl" 2>/dev/null |
        awk '/^tps/ {print $3; exit}')
  [ -n "$plain" ] || plain=$tps
  awk -v v="$variant" -v t="$tps" -v p="$plain" 'BEGIN { printf "%-22s %10.0f %8.2f\n", v, t, t / p }'
done
