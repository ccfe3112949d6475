# What test/scaffold's proofs share: a project made by kcr, its make test
# and make run, safe re-runs, and a broken reconciler caught by its own
# test. Sourced by <build>_project_test.sh, which sets `build` (bazel or
# cmake) and `make_vars` (an array of variables for the project's make)
# and calls the steps in order. Runs from kcr's root.

kcr_root=$PWD
dir=$(mktemp -d)
project=$dir/demo
pgid=""
make_vars=()
start=$SECONDS

cleanup() {
  if [ -n "$pgid" ]; then kill -KILL -- "-$pgid" 2>/dev/null; fi
  # The nested bazel's server and output base (each run's folder is new,
  # so its output base would be left behind); the disk cache keeps the
  # actions for the next run.
  if [ "$build" = bazel ] && [ -f "$project/WORKSPACE" ]; then
    (cd "$project" && bazel clean --expunge >/dev/null 2>&1)
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAILED scaffold $build: $*"
  if [ -s "$dir/log" ]; then
    echo "--- log (last 40 lines)"
    tail -n 40 "$dir/log"
  fi
  exit 1
}

# Builds kcr with the bazel flags given ("$@") into $kcr.
build_kcr() {
  (cd "$kcr_root" && bazel build "$@" //cmd/kcr) >"$dir/log" 2>&1 ||
    fail "building //cmd/kcr"
  kcr=$(cd "$kcr_root" && bazel info "$@" bazel-bin 2>/dev/null)/cmd/kcr/kcr
  [ -x "$kcr" ] || fail "no kcr binary at $kcr"
}

# kcr init (with the extra flags given), create api Guestbook (a
# reconciler), create handlers MemCached (cluster-scoped); cd's into it.
scaffold_project() {
  "$kcr" init --repo "$project" --domain example.com --build "$build" "$@" \
    >"$dir/log" 2>&1 || fail "kcr init"
  cd "$project" || fail "no $project"
  "$kcr" create api --group webapp --version v1 --kind Guestbook \
    >"$dir/log" 2>&1 || fail "kcr create api"
  "$kcr" create handlers --group cache --version v1beta1 --kind MemCached \
    --namespaced=false >"$dir/log" 2>&1 || fail "kcr create handlers"
}

# The project's make test passes, each kind's test among what passed
# ($1, $2: patterns of the two tests' passing lines).
check_make_test() {
  make test "${make_vars[@]}" >"$dir/log" 2>&1 ||
    fail "the generated project's make test"
  grep -qE "$1" "$dir/log" || fail "no passing guestbook_controller_test"
  grep -qE "$2" "$dir/log" || fail "no passing mem_cached_handlers_test"
  echo "scaffold $build: make test passed after $((SECONDS - start))s"
}

# make run: the manager on its embedded API server writes the samples'
# status (read with kubectl), and stops on SIGINT.
check_make_run() {
  setsid make run "${make_vars[@]}" \
    RUN_ARGS="--metrics-bind-address=0 --health-probe-bind-address=0" \
    >"$dir/run.out" 2>"$dir/run.err" &
  pgid=$!
  local deadline=$((SECONDS + 240))
  until grep -q "^try: kubectl --kubeconfig=" "$dir/run.out"; do
    if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$pgid" 2>/dev/null; then
      cat "$dir/run.out" "$dir/run.err" >"$dir/log"
      fail "make run did not start"
    fi
    sleep 0.5
  done
  local kubeconfig ready="" result=""
  kubeconfig=$(sed -n 's/^try: kubectl --kubeconfig=\([^ ]*\) .*/\1/p' "$dir/run.out")
  deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    ready=$(kubectl --kubeconfig="$kubeconfig" get guestbooks guestbook-sample \
      -n default -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' \
      2>/dev/null)
    result=$(kubectl --kubeconfig="$kubeconfig" get memcacheds memcached-sample \
      -o 'jsonpath={.status.create_fn.foo}' 2>/dev/null)
    [ "$ready" = True ] && [ "$result" = bar ] && break
    sleep 0.5
  done
  cp "$dir/run.err" "$dir/log"
  [ "$ready" = True ] || fail "make run: guestbook-sample's Ready is '$ready'"
  [ "$result" = bar ] ||
    fail "make run: memcached-sample's status.create_fn.foo is '$result'"
  kill -INT -- "-$pgid"
  deadline=$((SECONDS + 30))
  while kill -0 "$pgid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "make run did not stop on SIGINT"
    sleep 0.2
  done
  pgid=""
}

# Every file but build outputs, with its checksum.
sums() {
  find . \( -path './bazel-*' -o -path ./build \) -prune -o -type f -print0 |
    sort -z | xargs -0 md5sum
}

# Re-running kcr changes nothing; a file changed by hand is refused (exit
# 1) and kept.
check_reruns() {
  sums >"$dir/before"
  "$kcr" create api --group webapp --version v1 --kind Guestbook \
    >"$dir/log" 2>&1 || fail "re-running kcr create api"
  grep -qv "^unchanged " "$dir/log" &&
    fail "re-running kcr create api changed something"
  "$kcr" init --repo . --domain example.com --build "$build" \
    >"$dir/log" 2>&1 || fail "re-running kcr init"
  grep -qv "^unchanged " "$dir/log" && fail "re-running kcr init changed something"
  sums >"$dir/after"
  cmp -s "$dir/before" "$dir/after" ||
    fail "a re-run changed files: $(diff "$dir/before" "$dir/after")"
  echo "// mine" >>controllers/guestbook/guestbook_types.h
  "$kcr" create api --group webapp --version v1 --kind Guestbook \
    >"$dir/log" 2>&1
  [ $? -eq 1 ] || fail "kcr create api did not refuse to overwrite a changed file"
  grep -q "refusing to overwrite controllers/guestbook/guestbook_types.h" \
    "$dir/log" || fail "no refusal naming the changed file"
  tail -n 1 controllers/guestbook/guestbook_types.h | grep -q "^// mine$" ||
    fail "the changed file was not kept"
}

# One line of the reconciler broken (Ready no longer True): make test
# fails, and the guestbook's test is what failed ($1: its failing line).
check_broken_reconciler() {
  local file=controllers/guestbook/guestbook_controller.cc
  local line='ready.status = std::string(kcr::api::kConditionTrue);'
  grep -qF "$line" "$file" || fail "the line to break is not in $file"
  sed -i 's/ready.status = std::string(kcr::api::kConditionTrue);/ready.status = std::string(kcr::api::kConditionFalse);/' "$file"
  if make test "${make_vars[@]}" >"$dir/log" 2>&1; then
    fail "make test passed with a broken reconciler"
  fi
  grep -qE "$1" "$dir/log" ||
    fail "the broken reconciler did not fail its own test"
  echo "PASSED scaffold $build ($((SECONDS - start))s)"
}
