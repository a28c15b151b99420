#!/usr/bin/env bash
# ctest case: every C++ file git tracks is formatted as .clang-format says (clang-format 14, as
# Debian 12 ships it). Fix with: git ls-files '*.h' '*.cc' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/../.."
formatter=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$formatter" ]; then
  echo "FAIL: clang-format is not installed (scripts/install-deps installs it)" >&2
  exit 1
fi
if ! git -c safe.directory='*' rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "FAIL: not a git checkout: the check formats the files git tracks" >&2
  exit 1
fi
git -c safe.directory='*' ls-files -z '*.h' '*.cc' | xargs -0 "$formatter" --dry-run --Werror
echo "format_check: every tracked C++ file is formatted"
