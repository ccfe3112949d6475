#!/usr/bin/env bash
# `make run` as a user runs it: it builds and starts the controller manager
# on its embedded API server, kubectl works with the kubeconfig it prints
# and finds the samples (the SimpleDeployment's pod running, its uid in
# CHILDREN), and Ctrl-C (SIGINT to the whole foreground
# process group, as a terminal sends it) stops it cleanly.
#
#   test/make_run_test.sh [bazel flags...]   e.g. --config=werror
#
# Prints `PASSED make run` or `FAILED make run: <why>`; exit 0 on success.
set -uo pipefail
cd "$(dirname "$0")/.."

dir=$(mktemp -d)
pgid=""
cleanup() {
  if [ -n "$pgid" ]; then kill -KILL -- "-$pgid" 2>/dev/null; fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAILED make run: $*"
  echo "--- stdout"; cat "$dir/out"
  echo "--- stderr (last 40 lines)"; tail -n 40 "$dir/err"
  exit 1
}

# Waits up to $1 seconds for `$2` (a command) to succeed.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# Created here so that the waits below can read them at once.
: >"$dir/out"
: >"$dir/err"
setsid make run RUN_FLAGS="$*" \
  RUN_ARGS="--metrics-bind-address=127.0.0.1:0 --health-probe-bind-address=127.0.0.1:0" \
  >"$dir/out" 2>"$dir/err" </dev/null &
pgid=$!

# The first build of a fresh clone takes a while.
wait_for 1200 grep -q '^Ctrl-C stops.' "$dir/out" ||
  fail "it did not print 'Ctrl-C stops.'"
kubeconfig=$(sed -n 's/^kubeconfig: //p' "$dir/out")
[ -f "$kubeconfig" ] || fail "no kubeconfig at '$kubeconfig'"

kubectl() { HOME="$dir" command kubectl --kubeconfig="$kubeconfig" "$@"; }
kubectl get pods -A >"$dir/kubectl.out" 2>&1 ||
  fail "kubectl get pods: $(cat "$dir/kubectl.out")"
samples_installed() {
  kubectl get nginxes,loadtests,copyrators -A -o name >"$dir/kubectl.out" 2>&1 &&
    grep -q 'nginx.example.org/my-nginx' "$dir/kubectl.out"
}
wait_for 60 samples_installed ||
  fail "the samples are not there: $(cat "$dir/kubectl.out")"
# The SimpleDeployment sample is handled: CHILDREN holds its pod's uid, and
# that pod runs (it sleeps 120 s) on the simulated node.
sd_pod_running() {
  kubectl get sd example-01 >"$dir/kubectl.out" 2>&1 &&
    grep -q 'CHILDREN' "$dir/kubectl.out" &&
    uid=$(kubectl get sd example-01 -o 'jsonpath={.status.create_fn.children[0]}') &&
    [ -n "$uid" ] &&
    kubectl get pods -n default -o \
      'jsonpath={range .items[*]}{.metadata.uid} {.status.phase}{"\n"}{end}' \
      >>"$dir/kubectl.out" 2>&1 &&
    grep -q "^$uid Running$" "$dir/kubectl.out"
}
wait_for 60 sd_pod_running ||
  fail "the SimpleDeployment's pod is not running: $(cat "$dir/kubectl.out")"

kill -INT -- "-$pgid"
gone() { ! kill -0 -- "-$pgid" 2>/dev/null; }
wait_for 60 gone || fail "still running 60 s after SIGINT"
pgid=""
grep -qE '\] stopped$' "$dir/err" || fail "the manager did not log a clean stop"
[ ! -e "$kubeconfig" ] || fail "the kubeconfig was left behind"
echo "PASSED make run"
