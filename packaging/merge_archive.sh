#!/usr/bin/env bash
# Merges object files into one static archive, each under a member name of
# its own: `ar` keeps only a basename, and two packages' metrics.pic.o (or
# two libraries' objects of one name) would otherwise share a member name,
# which `ar r` replaces and `ar x` overwrites.
#
#   merge_archive.sh AR OUT.a OBJECT MEMBER [OBJECT MEMBER]...
set -euo pipefail
ar=$1
out=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
members=()
while [ $# -gt 0 ]; do
  ln -s "$PWD/$1" "$dir/$2"
  members+=("$dir/$2")
  shift 2
done
rm -f "$out"
# D: deterministic (zero timestamps and ids), as Bazel's own archives.
"$ar" rcsD "$out" "${members[@]}"
