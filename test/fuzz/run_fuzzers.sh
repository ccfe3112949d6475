#!/usr/bin/env bash
# Builds every libFuzzer target (tag "fuzzer") with clang and runs each for
# FUZZ_SECONDS (default 60) on a copy of its seed corpus, with inputs up to
# FUZZ_MAX_LEN bytes (default 65536). Each target runs its inputs on a
# thread with the local API server's connection stack
# (test/fuzz/server_stack.h). Prints how many
# ran clean and how many found a crash; exits non-zero on any crash.
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
# Inputs may grow to 64 KiB (libFuzzer's default stops at 4 KiB or the
# largest seed): recursion that grows with the input, such as a regular
# expression matched one stack frame per character, only overflows the
# server's connection stack at lengths like these.
max_len=${FUZZ_MAX_LEN:-65536}

# A failed lookup, or one that finds nothing (the tag renamed, the targets
# moved), is a failure: a fuzz run that fuzzes nothing must not pass.
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
if ! targets=$(bazel query 'attr(tags, "fuzzer", //...)' 2>"$errors"); then
  cat "$errors" >&2
  echo "fuzzers: FAILED to look up the fuzz targets (bazel query failed)"
  exit 1
fi
if [ -z "$targets" ]; then
  echo "fuzzers: FAILED: no target is tagged \"fuzzer\""
  exit 1
fi
# shellcheck disable=SC2086
if ! bazel build --config=fuzz $targets; then
  echo "fuzzers: build failed"
  exit 1
fi
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)
out=fuzz-out
mkdir -p "$out"
passed=0
failed=0
for t in $targets; do
  pkg=${t#//}; pkg=${pkg%%:*}; name=${t##*:}
  base=${name%_fuzzer}
  work="$out/$base"
  rm -rf "$work" && mkdir -p "$work/corpus"
  # The seed corpus lives next to the target: <pkg>/corpus/<test name>/.
  if [ -d "$pkg/corpus/$base" ]; then cp -r "$pkg/corpus/$base/." "$work/corpus/"; fi
  echo "fuzz: $t for ${seconds}s"
  if "$bin/$pkg/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len="$max_len" \
       -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1; then
    passed=$((passed + 1))
    grep -E 'stat::number_of_executed_units' "$work/log" | sed "s/^/  $name /"
  else
    failed=$((failed + 1))
    echo "fuzz: $t FAILED; log and crash input in $work/"
    tail -n 40 "$work/log"
  fi
done
echo "fuzzers: ${passed} ran clean, ${failed} found a crash"
[ "$failed" -eq 0 ]
