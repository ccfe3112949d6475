#!/usr/bin/env bash
# Runs `bazel test` with the given flags and targets (targets default to
# `//...`; tests always run, never served from the shared cache), then
# prints `N passed, N failed` on a line of its own, counted from Bazel's
# per-test results, and exits non-zero if anything failed or did not build.
#
#   test/run_all.sh                                   every test
#   test/run_all.sh --config=werror                   every test, gcc -Werror
#   test/run_all.sh --config=tsan //test/runtime/...  some tests, under TSan
#
# The whole suite (no targets given) also runs, with the same flags, each
# counted as one more test: test/make_run_test.sh (`make run` started, used
# with kubectl and stopped with Ctrl-C), test/packaging/install_test.sh
# (`make install`, its CMake and pkg-config consumers, `make uninstall`),
# and test/scaffold's proofs that the projects cmd/kcr makes build and
# pass their own tests (bazel_project_test.sh, cmake_project_test.sh).
set -uo pipefail
cd "$(dirname "$0")/.."

args=("$@")
has_target=0
flags=()
for a in "${args[@]}"; do
  case "$a" in -*) flags+=("$a") ;; *) has_target=1 ;; esac
done
if [ "$has_target" -eq 0 ]; then args+=("//..."); fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

bazel test --keep_going --nocache_test_results "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log")
if [ "$has_target" -eq 0 ]; then
  for t in test/make_run_test.sh test/packaging/install_test.sh \
    test/scaffold/bazel_project_test.sh test/scaffold/cmake_project_test.sh; do
    if "$t" "${flags[@]}"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
  done
fi
# A build failure outside any test (or a Bazel error) still fails the run.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1
fi
echo "${passed} passed, ${failed} failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
