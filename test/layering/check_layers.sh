#!/usr/bin/env bash
# Fails if a package depends on a layer above it, or if anything outside
# test/ and bench/ depends on test/. The layers, bottom up:
#
#   base -> api -> runtime/workqueue, runtime/client -> runtime/metrics
#     -> runtime/cache -> runtime/controller (with runtime/leaderelection,
#     runtime/events) -> runtime/handlers -> controllers -> cmd
#   apiserver stands on api and base only; inside it, internal -> storage
#     -> apply -> registry -> printers, kube_controllers -> endpoints -> top.
#   runtime/envtest stands on apiserver and runtime/client (and below).
#
# Each rule below names a package pattern and every pattern its rules may
# reach, directly or not (third_party and manifests, which is data, are
# always allowed); a pattern written !P is taken out of what is allowed.
# Every folder a rule names must exist (a rule about a folder that moved
# would otherwise pass without checking anything), and every query must
# succeed: either failing is a FAIL. Run from the workspace root:
#   test/layering/check_layers.sh
set -uo pipefail
cd "$(dirname "$0")/../.."

BAZEL=${BAZEL:-bazel}
failures=0
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT

# Whether pattern $1 (a/b/... or a/b:target) names at least one package.
exists() {
  local dir=${1%/...}
  dir=${dir%%:*}
  [[ -d $dir ]] && [[ -n $(find "$dir" -name BUILD.bazel -print -quit) ]]
}

# check LAYER ALLOWED...: every //... target that a rule in LAYER reaches is
# in LAYER, in one of ALLOWED, or in third_party.
check() {
  local layer=$1
  shift
  if ! exists "$layer"; then
    echo "FAIL $layer: no such package (the rule checks nothing)"
    failures=$((failures + 1))
    return
  fi
  local allowed="//$layer + //third_party/... + //manifests/..."
  local forbidden=""
  local missing=""
  local a
  for a in "$@"; do
    # third_party and manifests are allowed anyway; any other folder named
    # must exist.
    if [[ ${a#!} != third_party* && ${a#!} != manifests* ]] &&
      ! exists "${a#!}"; then
      missing+=" ${a#!}"
    elif [[ $a == !* ]]; then
      forbidden+=" - //${a#!}"
    else
      allowed+=" + //$a"
    fi
  done
  if [[ -n $missing ]]; then
    echo "FAIL $layer: the rule names what does not exist:$missing"
    failures=$((failures + 1))
    return
  fi
  allowed+="$forbidden"
  local bad
  if ! bad=$($BAZEL query --noshow_progress --output=label \
      "kind(rule, deps(//$layer) intersect //...) except ($allowed)" 2>"$errors"); then
    cat "$errors" >&2
    echo "FAIL $layer: bazel query failed"
    failures=$((failures + 1))
    return
  fi
  if [[ -n "$bad" ]]; then
    echo "FAIL $layer depends on what is above it or beside it:"
    # Name the rules that reach each offending target, to find the edge.
    local target
    for target in $bad; do
      local from
      from=$($BAZEL query --noshow_progress --output=label \
          "rdeps(//$layer, $target, 1) intersect //$layer" 2>/dev/null | tr '\n' ' ')
      echo "  $target  (from: ${from:-indirect})"
    done
    failures=$((failures + 1))
  else
    echo "ok   $layer"
  fi
}

check base/...
check api/... base/...
check runtime/workqueue/... base/...
# The generic client knows no application types: the custom resources'
# types live beside their controllers (controllers/<name>/*_types.h), above
# every runtime/ layer, so the rule for api/... keeps them out.
check runtime/client/... api/... base/...
# The cache's, the controller's, leader election's and shard ownership's
# metrics hooks are leaf interfaces their Prometheus providers implement;
# the rest of runtime/cache, runtime/controller, runtime/leaderelection and
# runtime/sharding stays above.
check runtime/metrics/... runtime/cache:metrics runtime/controller:metrics runtime/leaderelection:metrics runtime/sharding:metrics runtime/workqueue/... runtime/client/... api/... base/...
check runtime/cache/... runtime/client/... runtime/workqueue/... api/... base/...
check runtime/leaderelection/... runtime/cache/... runtime/client/... api/... base/...
check runtime/events/... runtime/cache/... runtime/client/... api/... base/...
# Shard ownership stands beside leader election, on the same Leases;
# controllers act on the shards they are told of.
check runtime/sharding/... runtime/leaderelection/... runtime/cache/... \
  runtime/client/... runtime/workqueue/... api/... base/...
check runtime/controller/... runtime/sharding/... runtime/leaderelection/... runtime/events/... \
  runtime/metrics/... runtime/cache/... runtime/client/... runtime/workqueue/... \
  api/... base/...
# kopf's handler model stands on the controller runtime and what is below
# it; controllers/ and cmd/ may use it.
check runtime/handlers/... runtime/controller/... runtime/sharding/... runtime/leaderelection/... \
  runtime/events/... runtime/metrics/... runtime/cache/... runtime/client/... \
  runtime/workqueue/... api/... base/...
check apiserver/... api/... base/...
# envtest runs the local API server for controllers' tests: it stands on
# apiserver/ and the client, and nothing in runtime/ but tests uses it.
check runtime/envtest/... apiserver/... runtime/client/... api/... base/...
# The controller explorer runs a Manager's controllers against envtest's
# server with faults: it stands on both and on what the Manager uses.
check runtime/explorer/... runtime/envtest/... apiserver/... runtime/controller/... \
  runtime/sharding/... runtime/leaderelection/... runtime/events/... runtime/metrics/... \
  runtime/cache/... runtime/client/... runtime/workqueue/... api/... base/...
# Inside apiserver/, bottom up: internal < storage < apply < registry <
# printers, kube_controllers, auth < endpoints < the server's face at the top.
# kube_controllers and endpoints do not see each other; auth (authentication,
# authorization, reviews) stands on registry and is used by endpoints.
check apiserver/internal/... api/... base/...
check apiserver/storage/... apiserver/internal/... api/... base/...
check apiserver/apply/... apiserver/internal/... api/... base/...
check apiserver/registry/... apiserver/apply/... apiserver/storage/... \
  apiserver/internal/... api/... base/...
check apiserver/printers/... apiserver/registry/... apiserver/apply/... \
  apiserver/storage/... apiserver/internal/... api/... base/...
check apiserver/kube_controllers/... apiserver/registry/... apiserver/apply/... \
  apiserver/storage/... apiserver/internal/... api/... base/...
check apiserver/auth/... apiserver/registry/... apiserver/apply/... apiserver/storage/... \
  apiserver/internal/... api/... base/...
check apiserver/endpoints/... apiserver/auth/... apiserver/printers/... apiserver/registry/... \
  apiserver/apply/... apiserver/storage/... apiserver/internal/... api/... base/...
check controllers/... runtime/... api/... base/...
check cmd/... controllers/... apiserver/... runtime/... api/... base/...

# Nothing outside test/ and bench/ depends on test/.
if ! bad=$($BAZEL query --noshow_progress --output=label \
    "kind(rule, deps(//... - //test/... - //bench/...)) intersect //test/..." 2>"$errors"); then
  cat "$errors" >&2
  echo "FAIL nothing outside test/ and bench/ depends on test/: bazel query failed"
  failures=$((failures + 1))
elif [[ -n "$bad" ]]; then
  echo "FAIL product code depends on test/:"
  echo "$bad" | sed 's/^/  /'
  failures=$((failures + 1))
else
  echo "ok   nothing outside test/ and bench/ depends on test/"
fi

# The public surface (docs/using-kcr.md): another workspace sees exactly the
# umbrella targets of the root package and the system-library wrappers;
# each umbrella covers every library of its folders, so nothing a user
# needs is left private.
public_expected="//:apiserver //:envtest //:runtime"
if ! public=$($BAZEL query --noshow_progress --output=label \
    'attr(visibility, "//visibility:public", kind(rule, //...)) - //third_party/...' \
    2>"$errors"); then
  cat "$errors" >&2
  echo "FAIL the public targets: bazel query failed"
  failures=$((failures + 1))
elif [[ "$(echo $public | tr ' ' '\n' | sort | tr '\n' ' ')" != "$public_expected " ]]; then
  echo "FAIL the public targets are not exactly $public_expected:"
  echo "$public" | sed 's/^/  /'
  failures=$((failures + 1))
else
  echo "ok   the public targets are $public_expected"
fi
cover() {
  local umbrella=$1 folders=$2 left
  if ! left=$($BAZEL query --noshow_progress --output=label \
      "kind(cc_library, $folders) - deps($umbrella)" 2>"$errors"); then
    cat "$errors" >&2
    echo "FAIL $umbrella: bazel query failed"
    failures=$((failures + 1))
  elif [[ -n "$left" ]]; then
    echo "FAIL $umbrella leaves out libraries of $folders:"
    echo "$left" | sed 's/^/  /'
    failures=$((failures + 1))
  else
    echo "ok   $umbrella covers $folders"
  fi
}
cover //:runtime "//base/... + //api/... + //runtime/... - //runtime/envtest/... - //runtime/explorer/..."
cover //:envtest "//runtime/envtest/... + //runtime/explorer/..."
cover //:apiserver "//apiserver/..."

if ((failures > 0)); then
  echo "$failures layer rule(s) broken"
  exit 1
fi
echo "every layer depends only on the layers below it"
