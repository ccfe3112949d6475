#!/usr/bin/env bash
# A project made by `kcr init --build bazel` builds against this checkout
# of kcr (local_repository) and passes its own tests, and they catch a
# broken reconciler:
#   1. kcr init, kcr create api (Guestbook, a reconciler), kcr create
#      handlers (MemCached, cluster-scoped, handlers) into a temporary
#      folder;
#   2. the project's `make test` passes (a nested bazel in the project's
#      own workspace, on kcr's shared disk cache);
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
kcr_root=$PWD

dir=$(mktemp -d)
project=$dir/demo
pgid=""
cleanup() {
  if [ -n "$pgid" ]; then kill -KILL -- "-$pgid" 2>/dev/null; fi
  if [ -d "$project" ]; then (cd "$project" && bazel shutdown 2>/dev/null); fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAILED scaffold bazel: $*"
  if [ -s "$dir/log" ]; then
    echo "--- log (last 40 lines)"
    tail -n 40 "$dir/log"
  fi
  exit 1
}

start=$SECONDS
bazel build "$@" //cmd/kcr >"$dir/log" 2>&1 || fail "building //cmd/kcr"
kcr=$(bazel info "$@" bazel-bin 2>/dev/null)/cmd/kcr/kcr
[ -x "$kcr" ] || fail "no kcr binary at $kcr"

# 1. The project.
"$kcr" init --repo "$project" --domain example.com --build bazel \
  --kcr-path "$kcr_root" >"$dir/log" 2>&1 || fail "kcr init"
cd "$project" || fail "no $project"
"$kcr" create api --group webapp --version v1 --kind Guestbook \
  >"$dir/log" 2>&1 || fail "kcr create api"
"$kcr" create handlers --group cache --version v1beta1 --kind MemCached \
  --namespaced=false >"$dir/log" 2>&1 || fail "kcr create handlers"
# Actions of an earlier run are reused from kcr's shared disk cache.
echo "build --disk_cache=$HOME/.cache/kcr-bazel-disk" >user.bazelrc

# 2. Its tests pass.
make test >"$dir/log" 2>&1 || fail "the generated project's make test"
grep -q "guestbook:guestbook_controller_test .*PASSED" "$dir/log" ||
  fail "no passing guestbook_controller_test"
grep -q "mem_cached:mem_cached_handlers_test .*PASSED" "$dir/log" ||
  fail "no passing mem_cached_handlers_test"
echo "scaffold bazel: make test passed after $((SECONDS - start))s"

# 3. make run: the samples get their status on the embedded API server.
setsid make run RUN_ARGS="--metrics-bind-address=0 --health-probe-bind-address=0" \
  >"$dir/run.out" 2>"$dir/run.err" &
pgid=$!
deadline=$((SECONDS + 180))
until grep -q "^try: kubectl --kubeconfig=" "$dir/run.out"; do
  [ "$SECONDS" -lt "$deadline" ] || { cat "$dir/run.err" >"$dir/log"; fail "make run did not start"; }
  kill -0 "$pgid" 2>/dev/null || { cat "$dir/run.err" >"$dir/log"; fail "make run exited"; }
  sleep 0.5
done
kubeconfig=$(sed -n 's/^try: kubectl --kubeconfig=\([^ ]*\) .*/\1/p' "$dir/run.out")
ready="" result=""
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
  ready=$(kubectl --kubeconfig="$kubeconfig" get guestbooks guestbook-sample -n default \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)
  result=$(kubectl --kubeconfig="$kubeconfig" get memcacheds memcached-sample 2>/dev/null \
    -o 'jsonpath={.status.create_fn.foo}' 2>/dev/null || true)
  [ "$ready" = True ] && [ "$result" = bar ] && break
  sleep 0.5
done
[ "$ready" = True ] || { cat "$dir/run.err" >"$dir/log"; fail "make run: guestbook-sample Ready is '$ready'"; }
[ "$result" = bar ] || { cat "$dir/run.err" >"$dir/log"; fail "make run: memcached-sample status.create_fn.foo is '$result'"; }
kill -INT -- "-$pgid"
deadline=$((SECONDS + 30))
while kill -0 "$pgid" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "make run did not stop on SIGINT"
  sleep 0.2
done
pgid=""

# 4. Re-running kcr is a no-op; a file changed by hand is refused.
sums() { find . -path ./bazel-\* -prune -o -type f -print0 | sort -z | xargs -0 md5sum; }
sums >"$dir/before"
"$kcr" create api --group webapp --version v1 --kind Guestbook >"$dir/log" 2>&1 ||
  fail "re-running kcr create api"
grep -qv "^unchanged " "$dir/log" && fail "re-running kcr create api changed something"
"$kcr" init --repo . --domain example.com --build bazel >"$dir/log" 2>&1 ||
  fail "re-running kcr init"
grep -qv "^unchanged " "$dir/log" && fail "re-running kcr init changed something"
sums >"$dir/after"
cmp -s "$dir/before" "$dir/after" || fail "a re-run changed files: $(diff "$dir/before" "$dir/after")"
echo "// mine" >>controllers/guestbook/guestbook_types.h
if "$kcr" create api --group webapp --version v1 --kind Guestbook >"$dir/log" 2>&1; then
  fail "kcr create api overwrote a changed file"
fi
grep -q "refusing to overwrite controllers/guestbook/guestbook_types.h" "$dir/log" ||
  fail "no refusal naming the changed file"
tail -n 1 controllers/guestbook/guestbook_types.h | grep -q "^// mine$" ||
  fail "the changed file was not kept"

# 5. A reconciler that no longer says Ready: its test fails.
file=controllers/guestbook/guestbook_controller.cc
grep -q 'ready.status = std::string(kcr::api::kConditionTrue);' "$file" ||
  fail "the line to break is not in $file"
sed -i 's/ready.status = std::string(kcr::api::kConditionTrue);/ready.status = std::string(kcr::api::kConditionFalse);/' "$file"
if make test >"$dir/log" 2>&1; then
  fail "make test passed with a broken reconciler"
fi
grep -q "guestbook:guestbook_controller_test .*FAILED" "$dir/log" ||
  fail "the broken reconciler did not fail its own test"

echo "PASSED scaffold bazel ($((SECONDS - start))s)"
