#!/usr/bin/env bash
# Compiles every header under an installed include directory on its own,
# as a consumer would include it, with nothing on the include path but that
# directory (and the compiler's system directories):
#
#   test/packaging/check_headers.sh INCLUDE_DIR [compiler flags...]
#
# A header that includes one that was not installed (an internal/ one), or
# that is not self-contained, fails. Prints `FAIL <header>` and the
# compiler's first lines for each failure, then a count; exit 1 if any
# failed.
#
# Compiling ~200 headers takes minutes of CPU, so a header that passed is
# not compiled again while it and every installed header it includes are
# unchanged, with the same compiler, flags and installed packages: each
# pass is kept as the list and hashes of those headers in
# ${XDG_CACHE_HOME:-~/.cache}/kcr-header-check (KCR_HEADER_CHECK_CACHE).
set -uo pipefail

[ $# -ge 1 ] || {
  echo "usage: $0 INCLUDE_DIR [compiler flags...]" >&2
  exit 2
}
inc=$(cd "$1" && pwd) || exit 2
shift
CHECK_CXX=${CXX:-g++}
CHECK_CACHE=${KCR_HEADER_CHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcr-header-check}
CHECK_FLAGS="$*"
mkdir -p "$CHECK_CACHE"
# What else a header's result depends on: the compiler, the flags, and the
# system headers (changed only by installing packages).
CHECK_ENV=$({
  "$CHECK_CXX" --version
  echo "$CHECK_FLAGS"
  stat -c %Y /var/lib/dpkg/status
} | sha256sum | cut -c1-16)
export CHECK_CXX CHECK_CACHE CHECK_FLAGS CHECK_ENV

# check_one HEADER (relative to the include directory, the working
# directory): prints `cached`, `compiled` or `FAIL ...`.
check_one() {
  local h=$1 entry out deps
  entry="$CHECK_CACHE/$(printf '%s %s' "$CHECK_ENV" "$h" | sha256sum | cut -c1-32)"
  if [ -f "$entry.deps" ] && [ -f "$entry.sum" ] &&
    xargs -a "$entry.deps" -d '\n' sha256sum 2>/dev/null | cmp -s - "$entry.sum"; then
    echo cached
    return
  fi
  deps=$(mktemp)
  # shellcheck disable=SC2086  # the flags are words without spaces
  if out=$(printf '#include "%s"\n' "$h" |
    "$CHECK_CXX" -std=c++17 -fsyntax-only $CHECK_FLAGS -I. \
      -MD -MF "$deps" -MT header -x c++ - 2>&1); then
    # The installed headers it reached (relative paths; system ones are
    # absolute).
    sed -e 's/^header://' -e 's/\\$//' "$deps" | tr ' ' '\n' |
      grep -v -e '^$' -e '^/' -e '^-$' | sed 's|^\./||' | sort -u >"$entry.deps.$$"
    # Written aside and renamed, as another check may run at once.
    xargs -a "$entry.deps.$$" -d '\n' sha256sum >"$entry.sum.$$" &&
      mv "$entry.deps.$$" "$entry.deps" && mv "$entry.sum.$$" "$entry.sum"
    rm -f "$entry.deps.$$" "$entry.sum.$$"
    echo compiled
  else
    printf 'FAIL %s\n%s\n' "$h" "$(head -n 5 <<<"$out" | sed 's/^/    /')"
  fi
  rm -f "$deps"
}
export -f check_one

cd "$inc" || exit 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
find . -name '*.h' -printf '%P\n' | sort |
  xargs -d '\n' -P "$(nproc)" -n 1 bash -c 'check_one "$1"' _ >"$log"
grep -v -e '^cached$' -e '^compiled$' "$log"
total=$(grep -c -e '^cached$' -e '^compiled$' -e '^FAIL ' "$log")
failed=$(grep -c '^FAIL ' "$log")
echo "headers: $total, compiled $(grep -c '^compiled$' "$log"), unchanged $(grep -c '^cached$' "$log"), failed $failed"
[ "$failed" -eq 0 ] && [ "$total" -gt 0 ]
