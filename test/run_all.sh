#!/usr/bin/env bash
# Runs `bazel test //...` (extra arguments are passed on; tests always run,
# never served from the shared cache), then prints
# `N passed, N failed` on a line of its own, counted from Bazel's per-test
# results, and exits non-zero if anything failed or did not build.
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT

bazel test //... --keep_going --nocache_test_results "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log")
# A build failure outside any test (or a Bazel error) still fails the run.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1
fi
echo "${passed} passed, ${failed} failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
