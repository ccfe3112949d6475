#!/usr/bin/env bash
# A project made by `kcr init --build cmake` builds against kcr installed
# from this checkout (`make install` into a temporary prefix, found with
# find_package(kcr) through CMAKE_PREFIX_PATH) and passes its own tests
# under ctest, and they catch a broken reconciler: the steps of
# bazel_project_test.sh (project_test_lib.sh), with CMake.
#
#   test/scaffold/cmake_project_test.sh [bazel flags...]   e.g. --config=werror
#
# Prints `PASSED scaffold cmake` or `FAILED scaffold cmake: <why>`; exit 0
# on success. Without a `make install` target in this checkout, prints
# `SKIPPED scaffold cmake: <why>` and exits 0.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=cmake
if ! make -n install >/dev/null 2>&1; then
  echo "SKIPPED scaffold cmake: this checkout has no make install"
  exit 0
fi
. test/scaffold/project_test_lib.sh

build_kcr "$@"
# The fastbuild objects bazel test already has (INSTALL_BAZEL_FLAGS=).
make install PREFIX="$dir/prefix" INSTALL_BAZEL_FLAGS= >"$dir/log" 2>&1 ||
  fail "make install"
make_vars=("CMAKE_PREFIX_PATH=$dir/prefix")
scaffold_project
check_make_test "guestbook_controller_test .*Passed" \
  "mem_cached_handlers_test .*Passed"
check_make_run
check_reruns
check_broken_reconciler "guestbook_controller_test .*Failed"
