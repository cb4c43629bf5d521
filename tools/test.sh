#!/usr/bin/env bash
# Sets everything up and runs every test: unit tests and the node-opcua interoperability suite against the
# daemon, under ASan+UBSan; the generated-code, services-layering and formatting checks (ctest:
# generated_code_is_current, layers, format); the .clang-tidy checks; the fuzz-corpus replay; the Debian package; the multi-threaded tests under TSan; and each
# libFuzzer target for a bounded time. Prints each stage's duration at the end.
# CI runs exactly this (.ci/run).
#   FUZZ_SECONDS=N tools/test.sh   # fuzzing time per target (default 30)
#
# Builds, each configured for what its stage runs (all unity builds, CMakeLists.txt):
#   build/asan     clang, Debug, ASan+UBSan: everything, the libFuzzer targets included (coverage
#                  instrumentation on the fuzzed libraries only), so one build serves the tests and fuzzing
#   build/package  the shipped Release build (packaging/build-deb.sh): the daemon the package test checks
#   build/tsan     clang, Debug, TSan: the test files holding threaded tests (concurrency_tests), whose threaded ones run
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh

stage_names=()
stage_seconds=()
stage_start=$SECONDS
stage_name=""
stage() {
  if [ -n "$stage_name" ]; then
    stage_names+=("$stage_name")
    stage_seconds+=($((SECONDS - stage_start)))
  fi
  stage_name=$1
  stage_start=$SECONDS
  [ -n "$1" ] && echo "== $1"
  return 0
}
report_stages() {
  stage ""
  echo "== stage durations"
  local i
  for i in "${!stage_names[@]}"; do
    printf '%6d s  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
  done
  printf '%6d s  total\n' "$SECONDS"
}
trap 'status=$?; [ $status -ne 0 ] && { echo "FAILED in stage: ${stage_name}"; report_stages; }; exit $status' EXIT

stage "packages"
opcuad_install "${OPCUAD_BUILD_PACKAGES[@]}" "${OPCUAD_TEST_PACKAGES[@]}"
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-30}

stage "node-opcua for the interoperability tests"
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)

stage "build: ASan + UBSan, with the libFuzzer targets (clang)"
CXX=clang++ cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPCUAD_SANITIZE=address -DOPCUAD_FUZZ=ON \
  >/dev/null
cmake --build build/asan -j "$jobs"

stage "clang-tidy: the checks of .clang-tidy over the ASan build's sources"
run-clang-tidy-14 -p build/asan -quiet -j "$jobs" >build/asan/clang-tidy.log 2>&1 || {
  grep -E "(warning|error):" build/asan/clang-tidy.log | sort -u
  echo "clang-tidy found problems (all of its output: build/asan/clang-tidy.log)"
  exit 1
}

stage "release build: the Debian package's daemon starts and reports its version"
deb=$(bash packaging/build-deb.sh build/package | tail -n 1)
build/package/daemon/opcuad --version

stage "unit, interoperability, package and fuzz-corpus tests (ASan + UBSan)"
# The package test checks the .deb just built instead of building its own.
OPCUAD_PACKAGE_DEB=$(realpath "$deb") OPCUAD_PACKAGE_BUILD_DIR=$(realpath build/package) \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

stage "concurrency tests (ThreadSanitizer, clang)"
CXX=clang++ cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPCUAD_SANITIZE=thread >/dev/null
cmake --build build/tsan -j "$jobs" --target concurrency_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build/tsan/tests/concurrency_tests '[live],[concurrency]'

stage "fuzzing (libFuzzer, ${fuzz_seconds}s per target, ${jobs} at a time)"
build/asan/tests/fuzz/make_seed_corpus build/asan/corpus
fuzz_one() {
  local target=$1 name
  name=$(basename "$target")
  mkdir -p "build/asan/corpus-run/$name"
  "$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "build/asan/corpus-run/$name" "build/asan/corpus/$name" >"build/asan/corpus-run/$name.log" 2>&1
}
pids=()
names=()
for target in build/asan/tests/fuzz/*_fuzz; do
  fuzz_one "$target" &
  pids+=($!)
  names+=("$(basename "$target")")
  # At most $jobs at once: wait for the oldest before starting another.
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || { tail -n 40 "build/asan/corpus-run/${names[0]}.log"; exit 1; }
    echo "-- ${names[0]}"; tail -n 12 "build/asan/corpus-run/${names[0]}.log"
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { tail -n 40 "build/asan/corpus-run/${names[$i]}.log"; exit 1; }
  echo "-- ${names[$i]}"; tail -n 12 "build/asan/corpus-run/${names[$i]}.log"
done

report_stages
trap - EXIT
echo "all tests passed"
