#!/usr/bin/env bash
# Installs kcr's libraries, public headers, CMake package and .pc files
# (`make install`), or removes them again (`make uninstall`).
#
#   packaging/install.sh install PREFIX DESTDIR [bazel flags...]
#   packaging/install.sh uninstall PREFIX DESTDIR
#
# install builds //packaging:install with the given flags and copies what
# its manifest lists to DESTDIR/PREFIX (DESTDIR stages a package: the
# files say PREFIX, not DESTDIR/PREFIX). It records every file and every
# directory it created in PREFIX/share/kcr/install_manifest.txt, which
# uninstall reads to remove exactly those; an install over an earlier one
# removes the earlier one first, so no file of an older version stays.
set -euo pipefail
cd "$(dirname "$0")/.."

BAZEL=${BAZEL:-bazel}
record=share/kcr/install_manifest.txt

die() {
  echo "install.sh: $*" >&2
  exit 1
}

[ $# -ge 3 ] || die "usage: $0 install|uninstall PREFIX DESTDIR [bazel flags...]"
cmd=$1
prefix=$2
destdir=$3
shift 3
case "$prefix" in
  /?*) ;;
  *) die "PREFIX must be an absolute path other than /, not '$prefix'" ;;
esac
prefix=${prefix%/}
root="$destdir$prefix"

uninstall() {
  local line kind path dirs=()
  while IFS=$'\t' read -r kind path; do
    case "$kind" in
      f) rm -f "$root/$path" ;;
      d) dirs+=("$path") ;;
      *) die "$root/$record: bad line '$kind $path'" ;;
    esac
  done <"$root/$record"
  # Created parents first, so the reverse order removes children first; a
  # directory that holds something else now stays.
  local i
  for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
    rmdir "$root/${dirs[i]}" 2>/dev/null || true
  done
}

# Creates directory $1 (relative to the prefix) and its missing parents,
# recording each one created.
created=()
declare -A known=()
make_dir() {
  local rel=$1
  [ -n "${known[$rel]:-}" ] && return
  if [ ! -d "$root/$rel" ]; then
    local parent
    parent=$(dirname "$rel")
    if [ "$parent" != . ]; then make_dir "$parent"; fi
    mkdir "$root/$rel"
    created+=("$rel")
  fi
  known[$rel]=1
}

case "$cmd" in
  uninstall)
    [ -f "$root/$record" ] || die "nothing to uninstall: no $root/$record"
    uninstall
    echo "uninstalled kcr from $root"
    ;;
  install)
    "$BAZEL" build "$@" //packaging:install
    execroot=$("$BAZEL" info "$@" execution_root 2>/dev/null)
    bin=$("$BAZEL" info "$@" bazel-bin 2>/dev/null)
    manifest="$bin/packaging/install_manifest.txt"
    if [ -f "$root/$record" ]; then uninstall; fi
    mkdir -p "$root"
    files=()
    while IFS=$'\t' read -r kind a b c; do
      case "$kind" in
        file | pc)
          # a: mode, b: source (relative to the execroot), c: destination
          make_dir "$(dirname "$c")"
          if [ "$kind" = pc ]; then
            sed "s|@PREFIX@|$prefix|" "$execroot/$b" >"$root/$c.tmp"
            install -m "$a" "$root/$c.tmp" "$root/$c"
            rm -f "$root/$c.tmp"
          else
            install -m "$a" "$execroot/$b" "$root/$c"
          fi
          files+=("$c")
          ;;
        link)
          # a: target, b: the link
          make_dir "$(dirname "$b")"
          ln -sfn "$a" "$root/$b"
          files+=("$b")
          ;;
        *) die "$manifest: bad line '$kind'" ;;
      esac
    done <"$manifest"
    make_dir "$(dirname "$record")"
    {
      for d in "${created[@]}"; do printf 'd\t%s\n' "$d"; done
      for f in "${files[@]}"; do printf 'f\t%s\n' "$f"; done
      printf 'f\t%s\n' "$record"
    } >"$root/$record"
    echo "installed kcr in $root (${#files[@]} files; make uninstall PREFIX=$prefix removes them)"
    ;;
  *) die "unknown command '$cmd'" ;;
esac
