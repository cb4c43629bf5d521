#!/usr/bin/env bash
# Installs what opcuad needs to build and test, from Debian 12's packages; sourced by run.sh and test.sh.
# Only packages that are missing are installed, so a second run asks no registry.
set -euo pipefail

OPCUAD_BUILD_PACKAGES=(build-essential cmake ninja-build pkg-config python3
  libasio-dev libssl-dev nlohmann-json3-dev libfmt-dev catch2 libmimalloc-dev libcli11-dev libpugixml-dev)
# Tests also need clang with its sanitizer and libFuzzer runtimes, and Node.js for the interoperability
# tests (node-opcua comes from the npm registry, pinned in tests/interop/package-lock.json).
# The package test (tests/packaging) needs dpkg-dev (CPack's dependency scan), systemd (systemd-analyze) and
# lintian. The sanitizer builds link with lld. The bench-smoke test of tools/plot_bench.py needs matplotlib
# (python3-matplotlib); the format check (tools/check_format.py) clang-format; the .clang-tidy stage clang-tidy.
OPCUAD_TEST_PACKAGES=(clang libclang-rt-14-dev lld clang-format clang-tidy dpkg-dev systemd lintian python3-matplotlib)
command -v node >/dev/null 2>&1 || OPCUAD_TEST_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || OPCUAD_TEST_PACKAGES+=(npm)

opcuad_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
