#!/usr/bin/env bash
# ctest case: the benchmark suite at toy size (scripts/bench --quick) runs against the test
# cluster and writes its files. It checks that files exist and are not empty, never timings.
#   QUICK_TEST_DATABASE_URL  the test cluster (scripts/test starts one)
#   QUICK_BUILD_DIR          where quick_bench and quick are built (set by tests/CMakeLists.txt)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"

if [ -z "${QUICK_TEST_DATABASE_URL:-}" ]; then
  echo "FAIL: QUICK_TEST_DATABASE_URL is not set: run the tests through scripts/test" >&2
  exit 1
fi
build_dir="${QUICK_BUILD_DIR:-$repo/build}"
tmp=$(mktemp -d /tmp/quick-bench-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

QUICK_DATABASE_URL="$QUICK_TEST_DATABASE_URL" "$repo/scripts/bench" --quick --no-build \
  --build-dir "$build_dir" --out "$tmp/results"

failures=0
require() {  # a file that must exist and not be empty
  if [ ! -s "$tmp/results/$1" ]; then
    echo "FAIL: $1 is missing or empty" >&2
    failures=$((failures + 1))
  fi
}
require summary.md
require targets.csv
# The experiments this suite is known to have, by the files they write.
for name in enqueue drain_many_tenants drain_one_tenant contention tenant_scale held_snapshot steady_load; do
  require "$name.csv"
  require "$name.png"
done
# Every CSV with a plot script got its plot.
for script in "$repo"/bench/plots/*.gp; do
  name=$(basename "$script" .gp)
  case "$name" in _*) continue ;; esac
  if [ -s "$tmp/results/$name.csv" ]; then require "$name.png"; fi
done
# Every experiment ran (but the opt-in ones, which run only when named: see below): each appears
# in the progress log, and the targets have rows.
while IFS=$'\t' read -r experiment _ opt_in; do
  [ "$opt_in" = opt-in ] && continue
  grep -q "== $experiment:" "$tmp/results/quick_bench.log" || { echo "FAIL: experiment $experiment did not run" >&2; failures=$((failures + 1)); }
done < <("$build_dir/quick_bench" --list)
if [ "$(wc -l < "$tmp/results/targets.csv")" -lt 2 ]; then
  echo "FAIL: targets.csv has no targets" >&2
  failures=$((failures + 1))
fi

# The opt-in multi_database experiment, alone at toy size: it starts (and deletes) clusters of its own.
QUICK_DATABASE_URL="$QUICK_TEST_DATABASE_URL" "$repo/scripts/bench" --quick --no-build \
  --build-dir "$build_dir" --experiment multi_database --out "$tmp/multi_database"
for file in multi_database.csv multi_database_moves.csv summary.md; do
  if [ ! -s "$tmp/multi_database/$file" ]; then
    echo "FAIL: multi_database: $file is missing or empty" >&2
    failures=$((failures + 1))
  fi
done
if ! grep -q "== multi_database:" "$tmp/multi_database/quick_bench.log"; then
  echo "FAIL: multi_database did not run" >&2
  failures=$((failures + 1))
fi
if grep -q "== multi_database:" "$tmp/results/quick_bench.log"; then
  echo "FAIL: the opt-in multi_database ran in the default run" >&2
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "--- results folder:" >&2
  ls -la "$tmp/results" "$tmp/multi_database" >&2
  exit 1
fi
echo "bench --quick: all files present"
