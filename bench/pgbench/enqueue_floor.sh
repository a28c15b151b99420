#!/usr/bin/env bash
# What an enqueue costs on Postgres, piece by piece: the measurements behind
# docs/benchmarks-history.md, "What an enqueue costs on Postgres". Two shapes of transaction, each with pgbench against a scratch
# database that has the quick schema and 10,000 tenants with a pointer each:
#   batch shape:  100 items into ~100 random tenants, 4 clients (the enqueue experiment's batch);
#   steady shape: ~60 items into 24 random tenants, 2 clients (a producer's 5 ms tick in the
#                 steady-state experiment);
#   single shape: one item into a random tenant per autocommit statement, 4 clients (the enqueue
#                 experiment's one-call comparison, issue 16);
#   calls shape:  no pgbench: the fast-path functions' own server time per item, hardened and not
#                 (issue 13's share, apart from the machine's noise; see measure_calls below).
# The producer's fast paths run as a login granted quick_producer (variants named ...@producer),
# as an application's producer would, and beside the same functions without issue 13's hardening
# (unhardened.*, made from the function files by without_hardening.sed): what the definer
# functions, the tenant-login rule and the limits table cost an enqueue.
# Variants go from a bare insert, through quick.items' indexes and the pointer locks, to what
# enqueue_batch_in runs (its one-statement fast path, sql/queries/enqueue_batch_into_existing_
# zones.sql) and quick.enqueue_batch, the function psql callers and the fast path's fallback use. Before each variant every table is put back to its seeded size
# (reset.sql), so that no variant pays for an index another one grew. Printed per variant:
# transactions/s, the ratio to the first (bare) variant, how busy the machine was, and its
# processor time per item (pgbench and server; /proc/stat): what an enqueue takes from cores
# that producers share with consumers.
#
# Usage: QUICK_DATABASE_URL="host=... port=... user=..." bench/pgbench/enqueue_floor.sh [seconds] [rounds] [shapes]
# (a keyword/value connection string: the scratch database is selected by appending dbname=;
# shapes: any of "batch steady single calls", the first three by default). It creates a login role for the
# producer variants and drops it, with the scratch database, when it ends.
# Needs a built `build/quick` (for `quick migrate`) and Postgres' pgbench (postgresql-15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
url=${QUICK_DATABASE_URL:?set QUICK_DATABASE_URL to a keyword/value connection string}
seconds=${1:-8}
rounds=${2:-2}
shapes=${3:-batch steady single}
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
[ -x "$pgbench" ] || { echo "pgbench not found (apt-get install postgresql-15)" >&2; exit 1; }
quick=${QUICK_BUILD_DIR:-$root/build}/quick
[ -x "$quick" ] || { echo "$quick not found: build first (cmake --build build)" >&2; exit 1; }

db="quick_enqueue_floor_$$"
producer="quick_enqueue_floor_producer_$$"
producer_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
legacy="quick_enqueue_floor_legacy_$$"  # the calls shape's application role from before the hardening
scratch=$(mktemp -d)  # generated pgbench scripts, and pgbench's errors when a variant fails
psql "$url" -qAtc "CREATE DATABASE $db" >/dev/null
trap 'psql "$url" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "DROP ROLE IF EXISTS $producer" -c "DROP ROLE IF EXISTS $legacy" >/dev/null; rm -rf "$scratch"' EXIT
dburl="$url dbname=$db"
"$quick" migrate --database "$dburl" >/dev/null
psql "$dburl" -q -v ON_ERROR_STOP=1 -f "$here/setup.sql" >/dev/null
# The producer: a login granted quick_producer, which reaches the tables only through the
# functions, with a random password (it lives as long as the script). Later keywords of a
# connection string override earlier ones, the URL's own password included.
psql "$dburl" -q -v ON_ERROR_STOP=1 -c "CREATE ROLE $producer LOGIN PASSWORD '$producer_password' IN ROLE quick_producer" \
  -c "GRANT SELECT ON batch_docs, steady_docs TO $producer" >/dev/null
producer_url="$dburl user=$producer password=$producer_password"
# The fast-path functions without the hardening, beside the real ones.
psql "$dburl" -q -v ON_ERROR_STOP=1 -c "CREATE SCHEMA unhardened" >/dev/null
for function in enqueue_into_existing_zone enqueue_batch_into_existing_zones; do
  sed -f "$here/without_hardening.sed" "$root/sql/functions/$function.sql" >"$scratch/unhardened_$function.sql"
  if grep -q 'SECURITY DEFINER\|search_path\|quick\.tenant_logins\|FROM quick\.limits\|current_limits\|FUNCTION quick\.' \
       "$scratch/unhardened_$function.sql"; then
    echo "without_hardening.sed no longer matches sql/functions/$function.sql: update it" >&2
    exit 1
  fi
  psql "$dburl" -q -v ON_ERROR_STOP=1 -f "$scratch/unhardened_$function.sql" >/dev/null
done
# The application role before issue 13 (for the calls shape): a login with rights on the tables
# themselves, calling the unhardened functions, so that both sides of that comparison pay a
# non-superuser's privilege checks; row-level security (issue 13's, off for tenants by
# default) does not apply to it, as there was none before.
psql "$dburl" -q -v ON_ERROR_STOP=1 -c "CREATE ROLE $legacy LOGIN BYPASSRLS PASSWORD '$producer_password'" \
  -c "GRANT USAGE ON SCHEMA quick, unhardened TO $legacy" \
  -c "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA quick TO $legacy" \
  -c "GRANT USAGE ON ALL SEQUENCES IN SCHEMA quick TO $legacy" \
  -c "GRANT EXECUTE ON FUNCTION quick.notify_consumers(), quick.record_pull_requests TO $legacy" \
  -c "GRANT SELECT ON batch_docs TO $legacy" >/dev/null
legacy_url="$dburl user=$legacy password=$producer_password"

# Busy and total clock ticks of all cores (user nice system idle iowait irq softirq steal).
cpu_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat; }
ticks_per_second=$(getconf CLK_TCK)

# enqueue_batch_in's fast path, the very statement the library embeds, reading its JSON array from
# the pre-built inputs instead of a parameter.
fast_path="$root/sql/queries/enqueue_batch_into_existing_zones.sql"
for shape in batch steady; do
  { echo '\set r random(1, 1000)'
    sed "s/\$1::jsonb/(SELECT doc::jsonb FROM ${shape}_docs WHERE id = :r)/; s/\$2::boolean/false/" "$fast_path"; } >"$scratch/${shape}_fast_path.sql"
done

for schema in quick unhardened; do
  sed "s/quick\.enqueue_batch_into_existing_zones/$schema.enqueue_batch_into_existing_zones/" \
    "$scratch/batch_fast_path.sql" >"$scratch/batch_fast_path_$schema.sql"
done
# The single shape's fast path as the one-call enqueue runs it (pull_in_transaction), the
# function's statement itself and the one-call statement (sql/queries/enqueue_now.sql) around it.
single_parameters="s/\$1/('t' || :t)/g; s/\$2/'send_receipt'/g; s/\$3::jsonb/('{\"order_id\": ' || :o || ', \"channel\": \"email\", \"attempt\": 1}')::jsonb/g; s/\$4::interval/interval '0'/g; s/\$5/0/g; s/\$6::boolean/true/g"
for query in enqueue_into_existing_zone enqueue_now; do
  { echo '\set t random(0, 9999)'; echo '\set o random(1, 1000000)'
    grep -v '^--' "$root/sql/queries/$query.sql" | sed "$single_parameters"; } >"$scratch/single_$query.sql"
done
for schema in quick unhardened; do
  sed "s/quick\.enqueue_into_existing_zone(/$schema.enqueue_into_existing_zone(/" \
    "$scratch/single_enqueue_into_existing_zone.sql" >"$scratch/single_fast_path_$schema.sql"
done

steady_items=$(psql "$dburl" -qAtc "SELECT round(avg(jsonb_array_length(doc::jsonb)), 1) FROM steady_docs")

# measure <label> <clients> <items per transaction> <variant>...: one line per variant.
measure() {
  local label=$1 clients=$2 items=$3 plain="" variant out tps txns busy0 total0 busy1 total1 connection
  shift 3
  echo "$label"
  printf '  %-36s %10s %8s %9s %12s\n' variant "txn/s" "vs first" "CPU busy" "CPU us/item"
  for variant in "$@"; do
    psql "$dburl" -q -v ON_ERROR_STOP=1 -f "$here/reset.sql" >/dev/null
    read -r busy0 total0 < <(cpu_ticks)
    connection=$dburl
    [ "${variant%@producer}" = "$variant" ] || connection=$producer_url
    script="$here/${variant%@producer}.sql"
    [ -f "$script" ] || script="$scratch/${variant%@producer}.sql"
    out=$("$pgbench" -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -f "$script" "$connection" \
            2>"$scratch/pgbench.err") ||
      { echo "pgbench failed on $variant:" >&2; grep -m3 error "$scratch/pgbench.err" >&2; exit 1; }
    read -r busy1 total1 < <(cpu_ticks)
    tps=$(awk '/^tps/ {print $3; exit}' <<<"$out")
    txns=$(awk '/number of transactions actually processed/ {print $NF; exit}' <<<"$out" | cut -d/ -f1)
    [ -n "$tps" ] && [ -n "$txns" ] || { echo "pgbench failed on $variant" >&2; exit 1; }
    [ -n "$plain" ] || plain=$tps
    awk -v v="$variant" -v t="$tps" -v p="$plain" -v n="$txns" -v k="$items" -v b=$((busy1 - busy0)) \
        -v a=$((total1 - total0)) -v hz="$ticks_per_second" \
        'BEGIN { printf "  %-36s %10.0f %8.2f %8.0f%% %12.1f\n", v, t, t / p, 100 * b / a, b / hz * 1e6 / (n * k) }'
  done
}

# The calls shape: what issue 13's hardening adds to the fast-path functions' own server time,
# apart from commits, round trips and the rest of the machine (whose noise in the shapes above is
# as large as the difference). One statement calls the function for 20,000 items, one at a time
# (the single shape's call) or in 200 batches of 100 (the batch shape's), in a transaction that
# is rolled back; the hardened functions as the producer, the unhardened ones as an application
# role of before the hardening (rights on the tables themselves). Printed per round: microseconds
# per item of each and the difference.
calls_items=20000
call_statement() {  # <schema> <single|batch>
  if [ "$2" = single ]; then
    echo "SELECT count($1.enqueue_into_existing_zone('t' || (g % 10000), 'send_receipt', ('{\"order_id\": ' || g || ', \"channel\": \"email\", \"attempt\": 1}')::jsonb, interval '0', 0, true)) FROM generate_series(1, $calls_items) g;"
  else
    echo "SELECT count(*) FROM batch_docs d, LATERAL $1.enqueue_batch_into_existing_zones(d.doc::jsonb, false) WHERE d.id <= $((calls_items / 100));"
  fi
}
call_us_per_item() {  # <connection> <schema> <single|batch>: one timed statement, rolled back
  psql "$1" -X -q -v ON_ERROR_STOP=1 >"$scratch/calls.out" 2>&1 <<SQL || { cat "$scratch/calls.out" >&2; exit 1; }
BEGIN;
\timing on
$(call_statement "$2" "$3")
\timing off
ROLLBACK;
SQL
  awk -v n="$calls_items" '/^Time: / {printf "%.2f", $2 * 1000 / n; exit}' "$scratch/calls.out"
}
measure_calls() {  # <round>
  local kind hardened unhardened
  echo "round $1, calls shape: the functions' own time for $calls_items items in one statement, rolled back"
  printf '  %-8s %16s %16s %12s\n' call "hardened us/item" "unhardened" difference
  for kind in single batch; do
    psql "$dburl" -q -c "VACUUM quick.items, quick.pointers" >/dev/null
    hardened=$(call_us_per_item "$producer_url" quick "$kind")
    psql "$dburl" -q -c "VACUUM quick.items, quick.pointers" >/dev/null
    unhardened=$(call_us_per_item "$legacy_url" unhardened "$kind")
    awk -v k="$kind" -v h="$hardened" -v u="$unhardened" 'BEGIN { printf "  %-8s %16.2f %16.2f %12.2f\n", k, h, u, h - u }'
  done
}

echo "${seconds} s per variant, ${rounds} round(s), shapes: ${shapes}, $(date -u +%FT%TZ)"
for round in $(seq 1 "$rounds"); do
  case " $shapes " in *" batch "*)
    measure "round $round, batch shape: 100 items into ~100 random tenants per transaction, 4 clients" 4 100 \
      plain queue_plain items_no_zone_index items_shape advisory_and_insert lock_and_insert json_lock_and_insert \
      batch_fast_path_unhardened batch_fast_path_quick@producer enqueue_batch ;;
  esac
  case " $shapes " in *" steady "*)
    measure "round $round, steady shape: ${steady_items} items into 24 random tenants per transaction, 2 clients" 2 "$steady_items" \
      steady_plain steady_queue_plain steady_items_shape steady_lock_and_insert steady_fast_path steady_enqueue_batch ;;
  esac
  case " $shapes " in *" single "*)
    measure "round $round, single shape: one item into a random tenant per autocommit statement, 4 clients" 4 1 \
      single_plain single_items_shape single_lock_and_insert single_fast_path_unhardened \
      single_fast_path_quick@producer single_enqueue_now@producer ;;
  esac
  case " $shapes " in *" calls "*) measure_calls "$round" ;; esac
done
