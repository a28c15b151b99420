#!/usr/bin/env bash
# ctest case: `cmake --install` of this build gives a usable package. Installs into a temporary
# prefix, then builds tests/packaging/consumer_project (one file, outside this project) against it
# twice, with find_package(quick) and with `pkg-config --static`, and runs each build (enqueue one
# item, consume it) on a fresh database of the test cluster: one migrated with the installed `quick migrate`, one built by psql
# from the installed SQL files in the README's order. Fails on any missing or broken piece.
#
# Environment (tests/CMakeLists.txt sets the first three):
#   QUICK_BUILD_DIR          the build to install
#   QUICK_CXX                the compiler of that build (the outside project uses the same)
#   QUICK_CMAKE              the cmake of that build
#   QUICK_TEST_DATABASE_URL  a cluster where the test may create databases
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
: "${QUICK_BUILD_DIR:?set by ctest}" "${QUICK_CXX:?set by ctest}" "${QUICK_CMAKE:?set by ctest}"
if [ -z "${QUICK_TEST_DATABASE_URL:-}" ]; then
  echo "FAIL: QUICK_TEST_DATABASE_URL is not set (scripts/test sets it)" >&2
  exit 1
fi
psql=${PSQL:-psql}

# ctest runs tests in parallel: everything this test makes is its own (directory, database names).
work=$(mktemp -d "${TMPDIR:-/tmp}/quick-packaging-XXXXXX")
# Databases are named quick_packaging_<this shell's pid>_<what>. new_database runs in a command
# substitution (a subshell), so the cleanup finds them by that prefix, not in a list it kept.
cleanup() {
  local database
  for database in $("$psql" -X -q -t -A "$QUICK_TEST_DATABASE_URL" \
    -c "SELECT datname FROM pg_database WHERE starts_with(datname, 'quick_packaging_$$_')" 2>/dev/null); do
    "$psql" -X -q "$QUICK_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS \"$database\" WITH (FORCE)" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The connection string of database $1 on the test cluster (a later dbname wins in libpq).
database_url() {
  case "$QUICK_TEST_DATABASE_URL" in
    postgres://* | postgresql://*)
      if [[ "$QUICK_TEST_DATABASE_URL" == *\?* ]]; then echo "$QUICK_TEST_DATABASE_URL&dbname=$1"; else echo "$QUICK_TEST_DATABASE_URL?dbname=$1"; fi ;;
    *) echo "$QUICK_TEST_DATABASE_URL dbname=$1" ;;
  esac
}
new_database() {
  local name="quick_packaging_$$_$1"
  "$psql" -X -q -v ON_ERROR_STOP=1 "$QUICK_TEST_DATABASE_URL" -c "CREATE DATABASE \"$name\"" >/dev/null
  database_url "$name"
}
# Runs the consumer binary $1 on database URL $2 with tenant $3: it enqueues one item and handles
# it. Checks what it printed and that the item is gone (completed, not dead).
check_consumer() {
  local output
  output=$(QUICK_DATABASE_URL="$2" "$1" "$3" 2>"$work/consumer.log") || { cat "$work/consumer.log" >&2; fail "$1 failed"; }
  [[ "$output" =~ ^[0-9]+\ \{\"from\":\ \"consumer_project\"\}$ ]] || fail "$1 printed: $output"
  local rows
  rows=$("$psql" -X -q -t -A -v ON_ERROR_STOP=1 "$2" -c "SELECT (SELECT count(*) FROM quick.items) + (SELECT count(*) FROM quick.dead_items)")
  [ "$rows" = 0 ] || fail "$3: the handled item is still in quick.items or quick.dead_items"
}

prefix="$work/prefix"
"$QUICK_CMAKE" --install "$QUICK_BUILD_DIR" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log" >&2; fail "cmake --install"; }

# The files the README promises.
libquick=$(find "$prefix" -name libquick.a)
[ -n "$libquick" ] || fail "no libquick.a under the prefix"
libdir=$(dirname "$libquick")
for path in include/quick/quick.h include/quick/config.h bin/quick share/quick/migrations/0004_baseline.sql \
  share/quick/sql/functions/enqueue.sql share/quick/sql/views.sql; do
  [ -e "$prefix/$path" ] || fail "$path is not installed"
done
for path in cmake/quick/quickConfig.cmake cmake/quick/quickConfigVersion.cmake cmake/quick/quickTargets.cmake pkgconfig/quick.pc; do
  [ -e "$libdir/$path" ] || fail "${libdir#"$prefix"/}/$path is not installed"
done
# Every migration, function and the views, nothing else: the psql recipe takes them all.
for dir in migrations sql/functions; do
  diff <(cd "$source_dir/$dir" && ls -- *.sql) <(cd "$prefix/share/quick/$dir" && ls) >/dev/null ||
    fail "share/quick/$dir differs from $dir/*.sql"
done

# 1. find_package(quick CONFIG), on a database migrated by the installed tool.
"$QUICK_CMAKE" -S "$source_dir/tests/packaging/consumer_project" -B "$work/cmake-build" \
  -DCMAKE_CXX_COMPILER="$QUICK_CXX" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; fail "find_package project: configure"; }
found=$(sed -n 's/^quick_DIR:PATH=//p' "$work/cmake-build/CMakeCache.txt")
[ "$found" = "$libdir/cmake/quick" ] || fail "find_package found quick in '$found', not in the prefix"
"$QUICK_CMAKE" --build "$work/cmake-build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "find_package project: build"; }
url=$(new_database cmake)
QUICK_DATABASE_URL="$url" "$prefix/bin/quick" migrate >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; fail "installed quick migrate"; }
check_consumer "$work/cmake-build/consumer" "$url" packaging/cmake

# 2. pkg-config, on a database built by psql from the installed SQL files (README's recipe).
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[ "$(pkg-config --modversion quick)" = "$(sed -n 's/^Version: //p' "$libdir/pkgconfig/quick.pc")" ] || fail "pkg-config --modversion quick"
# shellcheck disable=SC2046  # the flags are words
"$QUICK_CXX" -std=c++17 -o "$work/consumer-pkg-config" "$source_dir/tests/packaging/consumer_project/main.cc" \
  $(pkg-config --cflags quick) $(pkg-config --static --libs quick) || fail "pkg-config --static build"
url=$(new_database pkg_config)
cat "$prefix"/share/quick/migrations/*.sql "$prefix"/share/quick/sql/functions/*.sql "$prefix"/share/quick/sql/views.sql |
  "$psql" -X -q -v ON_ERROR_STOP=1 -o /dev/null "$url" || fail "psql on the installed SQL files"
check_consumer "$work/consumer-pkg-config" "$url" packaging/pkg-config

# 3. add_subdirectory into a project whose own targets have quick's old names: it configures,
# with the library alone by default (configured only: building it again would take minutes).
mkdir -p "$work/outer"
cat >"$work/outer/CMakeLists.txt" <<OUTER
cmake_minimum_required(VERSION 3.18)
project(outer LANGUAGES CXX)
add_library(quick INTERFACE)
add_library(quick_internal INTERFACE)
add_library(quick_tool_support INTERFACE)
add_subdirectory("$source_dir" quick-pg)
add_executable(consumer "$source_dir/tests/packaging/consumer_project/main.cc")
target_link_libraries(consumer PRIVATE quick::quick)
OUTER
"$QUICK_CMAKE" -S "$work/outer" -B "$work/outer-build" -DCMAKE_CXX_COMPILER="$QUICK_CXX" >"$work/outer.log" 2>&1 ||
  { cat "$work/outer.log" >&2; fail "add_subdirectory: configure"; }
"$QUICK_CMAKE" --build "$work/outer-build" --target help >"$work/outer-targets.log"
grep -q '[. ]quick_pg$' "$work/outer-targets.log" || fail "add_subdirectory: no quick_pg target"
for target in quick_cli quick_bench quick_pg_test_support install; do
  ! grep -q "[. ]$target\$" "$work/outer-targets.log" || fail "add_subdirectory: $target is built (or installed) by default"
done
"$(dirname "$QUICK_CMAKE")/ctest" --test-dir "$work/outer-build" -N >"$work/outer-tests.log"
! grep -q 'Test *#' "$work/outer-tests.log" ||
  fail "add_subdirectory: quick-pg's tests are registered in the outer project"

echo "install_test: the installed package builds and runs with find_package and with pkg-config;" \
  "add_subdirectory configures the library alone"
