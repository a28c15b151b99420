#!/usr/bin/env bash
# What one quick.visit_zones call costs, by the number of zones it visits: the measurement behind
# docs/benchmarks.md, "A visit's fixed cost". In a scratch database with the quick schema and
# 1,000 tenants whose pointers exist, one pgbench client repeats: enqueue one item into each of k
# consecutive tenants (the one-call enqueue's fast path, which pulls their pointers in), visit
# those k zones (dequeue_max 10; every item is taken and every zone settles), delete the leased
# items. Each statement commits on its own with synchronous_commit off, so that the server's work,
# not the disk's flush, is what is timed. Printed per k: the visit's average latency (pgbench -r,
# so with one local round trip) and, from k = 1 and the largest k, what a visit costs whatever
# its size and what each further zone adds.
#
# Usage: QUICK_DATABASE_URL="host=... port=... user=..." bench/pgbench/visit_cost.sh [seconds] [rounds] [zone counts]
# (a keyword/value connection string: the scratch database is selected by appending dbname=;
# defaults: 8 s, 2 rounds, zone counts "1 2 4 8"). Drops the scratch database when it ends.
# Needs a built `build/quick` (for `quick migrate`) and Postgres' pgbench (postgresql-15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
url=${QUICK_DATABASE_URL:?set QUICK_DATABASE_URL to a keyword/value connection string}
seconds=${1:-8}
rounds=${2:-2}
zone_counts=${3:-1 2 4 8}
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$pgbench" ] || { echo "pgbench not found (apt-get install postgresql-15)" >&2; exit 1; }
quick=${QUICK_BUILD_DIR:-$root/build}/quick
[ -x "$quick" ] || { echo "$quick not found: build first (cmake --build build)" >&2; exit 1; }

tenants=1000
db="quick_visit_cost_$$"
scratch=$(mktemp -d)
psql "$url" -qAtc "CREATE DATABASE $db" >/dev/null
trap 'psql "$url" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; rm -rf "$scratch"' EXIT
dburl="$url dbname=$db"
"$quick" migrate --database "$dburl" >/dev/null
# One item per tenant creates the pointers; deleting the items leaves them (min_inactive below is
# an hour, so no visit collects them).
psql "$dburl" -q -v ON_ERROR_STOP=1 \
  -c "SELECT count(*) FROM quick.enqueue_batch((SELECT jsonb_agg(jsonb_build_object('tenant', 't' || g, 'job_type', 'seed'))
                                                 FROM generate_series(0, $tenants - 1) g))" \
  -c "DELETE FROM quick.items" >/dev/null

for k in $zone_counts; do
  cat >"$scratch/visit_$k.sql" <<EOF
\set first random(0, $tenants - $k)
SELECT quick.enqueue_into_existing_zone('t' || (:first + g), 'job', '{}', interval '0', 0, true) FROM generate_series(0, $k - 1) g;
SELECT count(*) FROM quick.visit_zones(ARRAY(SELECT 't' || (:first + g) FROM generate_series(0, $k - 1) g), 10, interval '1 minute', interval '1 hour');
DELETE FROM quick.items WHERE tenant = ANY (ARRAY(SELECT 't' || (:first + g) FROM generate_series(0, $k - 1) g)) AND lease_id IS NOT NULL;
EOF
done

echo "${seconds} s per zone count, ${rounds} round(s), $(date -u +%FT%TZ)"
declare -A sum
for round in $(seq 1 "$rounds"); do
  for k in $zone_counts; do
    out=$(PGOPTIONS='-c synchronous_commit=off' "$pgbench" -n -M prepared -r -c 1 -T "$seconds" -f "$scratch/visit_$k.sql" \
            "$dburl" 2>"$scratch/pgbench.err") ||
      { echo "pgbench failed for $k zone(s):" >&2; grep -m3 -i error "$scratch/pgbench.err" >&2; exit 1; }
    ms=$(awk '/quick.visit_zones/ {print $1; exit}' <<<"$out")
    [ -n "$ms" ] || { echo "no visit latency in pgbench's report" >&2; exit 1; }
    printf 'round %d: %d zone(s) per visit: %.3f ms per visit\n' "$round" "$k" "$ms"
    sum[$k]=$(awk -v a="${sum[$k]:-0}" -v b="$ms" 'BEGIN { print a + b }')
  done
done
first=${zone_counts%% *}
last=${zone_counts##* }
echo "average over ${rounds} round(s):"
for k in $zone_counts; do
  awk -v k="$k" -v s="${sum[$k]}" -v r="$rounds" 'BEGIN { printf "  %d zone(s): %.3f ms per visit, %.3f ms per zone\n", k, s / r, s / r / k }'
done
if [ "$first" != "$last" ]; then
  awk -v a="${sum[$first]}" -v b="${sum[$last]}" -v r="$rounds" -v ka="$first" -v kb="$last" 'BEGIN {
    per = (b - a) / r / (kb - ka); fixed = a / r - per * ka
    printf "  fixed cost %.3f ms per visit, %.3f ms per further zone (from %d and %d zones)\n", fixed, per, ka, kb }'
fi
