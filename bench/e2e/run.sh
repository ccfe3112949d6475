#!/usr/bin/env bash
# The whole system end to end (`make bench-e2e`): cmd/local-apiserver and
# cmd/controller-manager (-c opt) as processes, the nginx controller with 4
# workers at --qps=5000 --burst=10000, N Nginx created at once and timed
# until every one is ready (bench/e2e/e2e.py says what each figure is).
#
#   E2E_SIZES="1000 10000 50000"  the sizes, in order
#   E2E_TIMEOUT=0                 seconds per size (0: 30 + 0.03 per object)
#   E2E_SOAK=1                    the soak instead (`make bench-e2e-soak`):
#   E2E_SOAK_SECONDS=300            its duration
#   E2E_SOAK_RATE=160               patches per second, in total
#   E2E_EVENT_TTL=                 the server's --event-ttl (soak default 60s)
#   E2E_PROFILE_IDLE=1             perf record the idle server (E2E_KEEP=1 keeps it)
#
# Ends with one line per figure: `<figure> <size>: kcr <value> <unit>`.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
BAZEL=${BAZEL:-bazel}
WORK=$(mktemp -d /tmp/kcr-bench-e2e.XXXXXX)
KEEP=${E2E_KEEP:-0}
cleanup() {
  if [[ $KEEP == 1 ]]; then echo "work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "== build (-c opt)" >&2
$BAZEL build -c opt //cmd/local-apiserver //cmd/controller-manager >&2
BIN=$WORK/bin
mkdir -p "$BIN"
cp "$ROOT/bazel-bin/cmd/local-apiserver/local-apiserver" \
  "$ROOT/bazel-bin/cmd/controller-manager/controller-manager" "$BIN/"

ARGS=(--server="$BIN/local-apiserver" --manager="$BIN/controller-manager"
      --crd="$ROOT/manifests/crds/nginx.yaml" --work="$WORK"
      --timeout="${E2E_TIMEOUT:-0}")
if [[ ${E2E_PROFILE_IDLE:-0} == 1 ]]; then ARGS+=(--profile-idle); fi
if [[ ${E2E_SOAK:-0} == 1 ]]; then
  ARGS+=(--soak="${E2E_SOAK_SECONDS:-300}" --soak-rate="${E2E_SOAK_RATE:-160}"
         --event-ttl="${E2E_EVENT_TTL-60s}")
else
  ARGS+=(--sizes="${E2E_SIZES:-1000 10000 50000}" --event-ttl="${E2E_EVENT_TTL:-}")
fi
echo "== $(date -u), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 "$ROOT/bench/e2e/e2e.py" "${ARGS[@]}"
