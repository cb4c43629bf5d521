#!/usr/bin/env bash
# Builds the Debian package: a Release build with prefix /usr and Debian's hardening flags
# (dpkg-buildflags with hardening=+all: stack protector, _FORTIFY_SOURCE, full RELRO, bind now), then
# CPack. Prints the path of the .deb.
#   bash packaging/build-deb.sh [BUILD_DIR]     # default build/package
# The same package comes from `cmake --build BUILD --target package` on a build configured like this.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/package}
jobs=${OPCUAD_PACKAGE_JOBS:-$(nproc)}
# A reproducible build: BuildInfo.BuildDate and the archive's times are the last commit's, not now, so a
# second run rebuilds nothing.
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
  export SOURCE_DATE_EPOCH
fi
flags() {
  # Debian's flags for this architecture, without the optimisation and debug levels (the project's
  # Release flags decide those) and without the path map (it would differ per checkout).
  DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1" |
    tr ' ' '\n' | grep -v -E '^(-g|-O[0-9s]?|-ffile-prefix-map=.*|-fdebug-prefix-map=.*|-Wdate-time)$' | tr '\n' ' '
}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DOPCUAD_BUILD_TESTS=OFF \
  -DCMAKE_CXX_FLAGS="$(flags CPPFLAGS) $(flags CXXFLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(flags LDFLAGS)" >/dev/null
# Only what the package holds (not the benchmarks); cpack installs from the build tree.
cmake --build "$build" -j "$jobs" --target opcuad opcuad_package_files >&2
rm -f "$build"/opcuad_*.deb
(cd "$build" && cpack -G DEB --config CPackConfig.cmake >&2)
ls "$build"/opcuad_*.deb
