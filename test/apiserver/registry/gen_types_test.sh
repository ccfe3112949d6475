#!/bin/bash
# third_party/kubernetes-api/gen_types.py: the vendored API gives tables of
# every resource; a type it does not know, or a Quantity field that is no
# longer a string, fails the generation with a message naming the field.
set -u
gen=$1
api=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then
    echo "ok   $name"
  else
    echo "FAIL $name"
    failures=$((failures + 1))
  fi
}

/usr/bin/python3 "$gen" "$api" "$tmp/good.cc" >"$tmp/good.out" 2>&1
check "the vendored API generates" test $? -eq 0
check "every resource has a row" \
  test "$(grep -c '^    {"[a-z0-9.]*", "v[0-9a-z]*", "[a-z]*", "[A-Za-z]*", ' "$tmp/good.cc")" -eq 88
check "structs carry kube-openapi names" \
  grep -q '"v1.PodSpec", -1, [0-9]*, [0-9]*, "io.k8s.api.core.v1.PodSpec"' "$tmp/good.cc"

# Writes a copy of the vendored API changed by a Python statement on `doc`.
mutate() {  # mutate OUT STATEMENT
  /usr/bin/python3 - "$api" "$1" "$2" <<'PY'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1], "rt", encoding="utf-8"))
exec(sys.argv[3])
with gzip.open(sys.argv[2], "wt", encoding="utf-8") as f:
    json.dump(doc, f)
PY
}

mutate "$tmp/unknown.json.gz" \
  'doc["models"]["V1PodSpec"]["fields"].append(["mystery", "Mystery", "", 0, ""])'
/usr/bin/python3 "$gen" "$tmp/unknown.json.gz" "$tmp/unknown.cc" >"$tmp/unknown.out" 2>&1
check "an unknown type fails" test $? -ne 0
check "naming the field and the type" \
  grep -q "PodSpec.mystery: type 'Mystery' (format '') not understood" "$tmp/unknown.out"
check "and writes nothing" test ! -e "$tmp/unknown.cc"

mutate "$tmp/format.json.gz" '
for f in doc["models"]["V1DeploymentSpec"]["fields"]:
    if f[0] == "replicas":
        f[2] = "int128"'
/usr/bin/python3 "$gen" "$tmp/format.json.gz" "$tmp/format.cc" >"$tmp/format.out" 2>&1
check "an unknown format fails" test $? -ne 0
check "naming it" grep -q "DeploymentSpec.replicas: type 'number' (format 'int128')" "$tmp/format.out"

mutate "$tmp/quantity.json.gz" '
for f in doc["models"]["V1ResourceRequirements"]["fields"]:
    if f[0] == "limits":
        f[0] = "limitz"'
/usr/bin/python3 "$gen" "$tmp/quantity.json.gz" "$tmp/quantity.cc" >"$tmp/quantity.out" 2>&1
check "a Quantity field gone from the source fails" test $? -ne 0
check "naming it" grep -q "ResourceRequirements.limits: no such field" "$tmp/quantity.out"

if [ "$failures" -ne 0 ]; then
  cat "$tmp"/*.out
  exit 1
fi
