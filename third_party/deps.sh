#!/usr/bin/env bash
# Installs the Debian 12 packages kcr builds and tests with, and nothing
# else. Idempotent and non-interactive: a second run finds every package
# present, installs nothing and returns in well under a second.
set -euo pipefail

packages=(
  bazel-bootstrap
  g++
  clang-14
  libclang-rt-14-dev
  clang-format-14
  pkg-config
  cmake
  libcpprest-dev
  libboost-dev
  libssl-dev
  rapidjson-dev
  libabsl-dev
  libgoogle-glog-dev
  libgflags-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libyaml-cpp-dev
  prometheus-cpp-dev
  libre2-dev
  zlib1g-dev
  python3-kubernetes
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
