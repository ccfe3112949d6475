#!/usr/bin/env bash
# A project made by `kcr init --build bazel` builds against this checkout
# of kcr (local_repository) and passes its own tests, and they catch a
# broken reconciler (project_test_lib.sh has the steps):
#   1. kcr init, kcr create api (Guestbook, a reconciler), kcr create
#      handlers (MemCached, cluster-scoped, handlers) into a temporary
#      folder;
#   2. the project's `make test` passes (a nested bazel in the project's
#      own workspace, on kcr's shared disk cache; its server and output
#      base removed at the end);
#   3. its `make run` serves the samples on the embedded API server with
#      their status written (kubectl), and stops on SIGINT;
#   4. re-running kcr changes nothing; a file changed by hand makes it
#      refuse (exit 1) and stay unchanged;
#   5. one line of the generated reconciler broken: `make test` fails.
#
#   test/scaffold/bazel_project_test.sh [bazel flags...]   e.g. --config=werror
#
# Prints `PASSED scaffold bazel` or `FAILED scaffold bazel: <why>`; exit 0
# on success.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=bazel
. test/scaffold/project_test_lib.sh

build_kcr "$@"
scaffold_project --kcr-path "$kcr_root"
# Actions of an earlier run are reused from kcr's shared disk cache.
echo "build --disk_cache=$HOME/.cache/kcr-bazel-disk" >user.bazelrc
check_make_test "guestbook:guestbook_controller_test .*PASSED" \
  "mem_cached:mem_cached_handlers_test .*PASSED"
check_make_run
check_reruns
check_broken_reconciler "guestbook:guestbook_controller_test .*FAILED"
