#!/usr/bin/env bash
# `make install` as a packager and its users see it: installed through
# DESTDIR into a temporary root, then
#   - the layout: libraries (static, shared with SONAME and links), the
#     CMake package, the .pc files, headers under include/kcr and none from
#     an internal/ folder; every object of the closure in the archives;
#   - every installed header compiles on its own with only the installed
#     include directory (and a header planted to include an internal one
#     fails that check);
#   - a CMake project with find_package(kcr) and target_link_libraries(app
#     kcr::runtime) only, linked shared and (KCR_USE_STATIC_LIBS) static,
#     and a pkg-config build of the same program, each run, and a CMake
#     program on kcr::envtest that starts the embedded API server;
#   - `make uninstall` leaves the prefix empty.
#
#   test/packaging/install_test.sh [bazel flags...]   e.g. --config=werror
#
# The flags go to make install's Bazel build, so with those `make test`
# used the libraries come from objects already built. Prints `PASSED make
# install` or `FAILED make install: <why>`; exit 0 on success.
set -uo pipefail
cd "$(dirname "$0")/../.."

BAZEL=${BAZEL:-bazel}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prefix=/opt/kcr
stage=$dir/stage
root=$stage$prefix
start=$SECONDS

fail() {
  echo "FAILED make install: $*"
  exit 1
}
step() { echo "install_test: $* ($((SECONDS - start)) s)"; }

step "make install PREFIX=$prefix DESTDIR=$stage"
make install PREFIX="$prefix" DESTDIR="$stage" INSTALL_BAZEL_FLAGS="$*" \
  >"$dir/install.log" 2>&1 || {
  tail -n 30 "$dir/install.log"
  fail "make install failed"
}

step "layout"
libs=(kcr_runtime kcr_apiserver kcr_envtest)
expected=(lib/cmake/kcr/kcrConfig.cmake lib/cmake/kcr/kcrConfigVersion.cmake
  lib/pkgconfig/kcr.pc lib/pkgconfig/kcr-apiserver.pc lib/pkgconfig/kcr-envtest.pc
  share/kcr/install_manifest.txt)
for l in "${libs[@]}"; do
  expected+=("lib/lib$l.a" "lib/lib$l.so.0.1.0")
  [ "$(readlink "$root/lib/lib$l.so.0")" = "lib$l.so.0.1.0" ] ||
    fail "lib/lib$l.so.0 does not link to lib$l.so.0.1.0"
  [ "$(readlink "$root/lib/lib$l.so")" = "lib$l.so.0" ] ||
    fail "lib/lib$l.so does not link to lib$l.so.0"
  soname=$(readelf -d "$root/lib/lib$l.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = "lib$l.so.0" ] || fail "lib$l.so.0.1.0 has SONAME '$soname'"
done
for f in "${expected[@]}"; do
  [ -f "$root/$f" ] && [ ! -L "$root/$f" ] || fail "$f is missing"
done
# Nothing but those, the links and the headers.
others=$(cd "$root" && find . \( -type f -o -type l \) -printf '%P\n' |
  grep -v -e '^include/kcr/.*\.h$' -e '^lib/libkcr_[a-z]*\.so\(\.0\)\?$' |
  grep -vxF -f <(printf '%s\n' "${expected[@]}"))
[ -z "$others" ] || fail "unexpected files installed: $others"
[ -z "$(find "$stage" -path "$root" -prune -o -type f -print)" ] ||
  fail "files outside the prefix: $(find "$stage" -path "$root" -prune -o -type f -print)"
internal=$(cd "$root/include/kcr" && find . -path '*/internal/*' -printf '%P\n')
[ -z "$internal" ] || fail "internal headers installed: $internal"
for h in runtime/controller/manager.h runtime/workqueue/queue.h api/object.h \
  apiserver/api_server.h base/status_macros.h base/flags.h \
  runtime/envtest/environment.h; do
  [ -f "$root/include/kcr/$h" ] || fail "include/kcr/$h is missing"
done
ldd "$root/lib/libkcr_envtest.so" >"$dir/ldd" 2>&1 || fail "ldd: $(cat "$dir/ldd")"
grep -q "libkcr_runtime.so.0 => $root/lib/" "$dir/ldd" &&
  grep -q "libkcr_apiserver.so.0 => $root/lib/" "$dir/ldd" &&
  ! grep -q 'not found' "$dir/ldd" ||
  fail "libkcr_envtest.so does not resolve its libraries: $(cat "$dir/ldd")"

# Every kcr object of each umbrella's closure is in its archive exactly
# once (a member name clash would drop one): count the PIC compile actions
# Bazel has for the kcr libraries each library holds.
objects() {
  "$BAZEL" aquery --noshow_progress "$@" "mnemonic('CppCompile', $closure)" \
    --output=text 2>/dev/null | grep -c '^  Outputs: \[.*\.pic\.o'
}
declare -A closures=(
  [kcr_runtime]="deps(//:runtime)"
  [kcr_apiserver]="deps(//:apiserver) except deps(//:runtime)"
  [kcr_envtest]="deps(//:envtest) except deps(//:apiserver) except deps(//:runtime)"
)
for l in "${libs[@]}"; do
  closure=${closures[$l]}
  want=$(objects "$@")
  have=$(ar t "$root/lib/lib$l.a" | wc -l)
  [ "$want" -gt 0 ] && [ "$have" = "$want" ] ||
    fail "lib$l.a holds $have objects, its closure has $want objects"
done
dups=$(for l in "${libs[@]}"; do ar t "$root/lib/lib$l.a"; done | sort | uniq -d)
[ -z "$dups" ] || fail "archive members named twice: $dups"

pc() { PKG_CONFIG_PATH="$root/lib/pkgconfig" pkg-config "$@"; }
[ "$(pc --variable=prefix kcr)" = "$prefix" ] ||
  fail "kcr.pc says prefix=$(pc --variable=prefix kcr), not $prefix"
pc --exists 'kcr = 0.1.0' 'kcr-apiserver = 0.1.0' 'kcr-envtest = 0.1.0' ||
  fail "pkg-config: no kcr 0.1.0"
# The staged tree stands in for PREFIX from here on.
pcflags() { pc --define-variable=prefix="$root" "$@"; }

step "every header on its own"
# The include directory is the check's argument; the flags are the .pc
# files' defines.
# shellcheck disable=SC2046
test/packaging/check_headers.sh "$root/include/kcr" $(pcflags --cflags-only-other kcr-envtest) \
  >"$dir/headers.log" 2>&1 || {
  grep -A5 '^FAIL' "$dir/headers.log" | head -n 40
  fail "installed headers do not compile on their own"
}
tail -n 1 "$dir/headers.log"
# The check catches a public header that includes an internal one.
cp -r "$root/include/kcr" "$dir/planted"
printf '#include "runtime/handlers/internal/state.h"\n' >"$dir/planted/runtime/planted.h"
# shellcheck disable=SC2046
if test/packaging/check_headers.sh "$dir/planted" $(pcflags --cflags-only-other kcr-envtest) \
  >"$dir/planted.log" 2>&1; then
  fail "a header including an internal one passed the header check"
fi
grep -q '^FAIL runtime/planted.h$' "$dir/planted.log" &&
  [ "$(grep -c '^FAIL' "$dir/planted.log")" = 1 ] ||
  fail "the header check did not name just the planted header: $(cat "$dir/planted.log")"

# A consumer: parses an object and queues its key.
mkdir -p "$dir/app"
cat >"$dir/app/main.cc" <<'EOF'
#include <iostream>
#include <string>

#include "api/object.h"
#include "runtime/cache/store.h"
#include "runtime/workqueue/queue.h"

int main() {
  auto object = kcr::api::Object::Parse(
      R"({"apiVersion":"v1","kind":"ConfigMap",)"
      R"("metadata":{"name":"demo","namespace":"default"}})");
  if (!object.ok()) {
    std::cerr << object.status() << "\n";
    return 1;
  }
  auto key = kcr::cache::MetaNamespaceKey(**object);
  if (!key.ok()) return 1;
  kcr::workqueue::Queue<std::string> queue;
  queue.Add(*key);
  queue.Add(*key);  // folds into the first
  std::cout << "queued " << queue.Len();
  auto item = queue.Get();
  std::cout << ", got " << *item << "\n";
  queue.Done(*item);
  queue.ShutDown();
  return 0;
}
EOF
cat >"$dir/app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(app CXX)
find_package(kcr 0.1 CONFIG REQUIRED)
add_executable(app main.cc)
target_link_libraries(app kcr::runtime)
EOF
want_out="queued 1, got default/demo"

# cmake_app NAME [cmake flags...]: configures, builds and runs the app.
cmake_app() {
  local name=$1 out
  shift
  cmake -S "$dir/app" -B "$dir/$name" -DCMAKE_PREFIX_PATH="$root" "$@" \
    >"$dir/$name.log" 2>&1 &&
    cmake --build "$dir/$name" -j 2 >>"$dir/$name.log" 2>&1 || {
    tail -n 30 "$dir/$name.log"
    fail "the CMake consumer ($name) did not build"
  }
  out=$("$dir/$name/app" 2>&1) || fail "the CMake consumer ($name) failed: $out"
  [ "$out" = "$want_out" ] || fail "the CMake consumer ($name) printed '$out'"
}

step "CMake consumer, shared"
cmake_app cmake-shared
readelf -d "$dir/cmake-shared/app" | grep -q 'NEEDED.*\[libkcr_runtime.so.0\]' ||
  fail "the shared CMake consumer does not load libkcr_runtime.so.0"

step "CMake consumer, static (KCR_USE_STATIC_LIBS)"
cmake_app cmake-static -DKCR_USE_STATIC_LIBS=ON
! readelf -d "$dir/cmake-static/app" | grep -q 'libkcr_' ||
  fail "the static CMake consumer still loads a kcr shared library"

step "pkg-config consumer"
# shellcheck disable=SC2046
g++ -std=c++17 -o "$dir/pc-app" "$dir/app/main.cc" $(pcflags --cflags --libs kcr) \
  >"$dir/pc.log" 2>&1 || {
  tail -n 30 "$dir/pc.log"
  fail "the pkg-config consumer did not build"
}
out=$(LD_LIBRARY_PATH="$root/lib" "$dir/pc-app" 2>&1) || fail "the pkg-config consumer failed: $out"
[ "$out" = "$want_out" ] || fail "the pkg-config consumer printed '$out'"

step "kcrConfigVersion.cmake"
# The same major.minor is accepted, another or a newer one is not.
mkdir -p "$dir/version"
cat >"$dir/version/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(version NONE)
find_package(kcr ${WANT} CONFIG REQUIRED)
EOF
for want in 0.1 0.1.0 "0.1.0;EXACT" 0.2 0.1.1 1.0; do
  if cmake -S "$dir/version" -B "$dir/version/build" -DCMAKE_PREFIX_PATH="$root" \
    -DWANT="$want" >/dev/null 2>&1; then
    found=yes
  else
    found=no
  fi
  case "$want" in 0.1 | 0.1.0 | "0.1.0;EXACT") expect=yes ;; *) expect=no ;; esac
  [ "$found" = "$expect" ] || fail "find_package(kcr $want) found kcr: $found"
  rm -rf "$dir/version/build"
done

step "CMake consumer of kcr::envtest"
# Starts the embedded API server and lists its namespaces.
mkdir -p "$dir/envtest-app"
cat >"$dir/envtest-app/main.cc" <<'EOF'
#include <iostream>

#include "base/context.h"
#include "runtime/client/options.h"
#include "runtime/envtest/environment.h"

int main() {
  auto env = kcr::envtest::Environment::Start();
  if (!env.ok()) {
    std::cerr << env.status() << "\n";
    return 1;
  }
  auto namespaces = (*env)->client().List(
      kcr::Context::Background(),
      kcr::client::Resource::ClusterScoped({"", "v1", "namespaces"}));
  if (!namespaces.ok()) {
    std::cerr << namespaces.status() << "\n";
    return 1;
  }
  for (const auto& ns : namespaces->items) std::cout << ns->name() << "\n";
  (*env)->Stop();
  return 0;
}
EOF
cat >"$dir/envtest-app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(envtest_app CXX)
find_package(kcr 0.1 CONFIG REQUIRED)
add_executable(app main.cc)
target_link_libraries(app kcr::envtest)
EOF
cmake -S "$dir/envtest-app" -B "$dir/cmake-envtest" -DCMAKE_PREFIX_PATH="$root" \
  >"$dir/cmake-envtest.log" 2>&1 &&
  cmake --build "$dir/cmake-envtest" -j 2 >>"$dir/cmake-envtest.log" 2>&1 || {
  tail -n 30 "$dir/cmake-envtest.log"
  fail "the kcr::envtest consumer did not build"
}
out=$(timeout 60 "$dir/cmake-envtest/app" 2>"$dir/envtest-app.err") || {
  tail -n 20 "$dir/envtest-app.err"
  fail "the kcr::envtest consumer failed: $out"
}
grep -qx default <<<"$out" && grep -qx kube-system <<<"$out" ||
  fail "the kcr::envtest consumer listed '$out', not default and kube-system"

step "make uninstall"
make uninstall PREFIX="$prefix" DESTDIR="$stage" >"$dir/uninstall.log" 2>&1 ||
  fail "make uninstall: $(cat "$dir/uninstall.log")"
left=$(find "$root" -mindepth 1)
[ -z "$left" ] || fail "make uninstall left: $left"

step "done"
echo "PASSED make install"
