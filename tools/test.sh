#!/usr/bin/env bash
# Sets everything up and runs every test: unit tests and the node-opcua interoperability suite against the
# daemon, under ASan+UBSan; the generated-code check; the fuzz-corpus replay; the multi-threaded tests
# under TSan; and each libFuzzer target for a bounded time.
# CI runs exactly this (.ci/run).
#   FUZZ_SECONDS=N tools/test.sh   # fuzzing time per target (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
opcuad_install "${OPCUAD_BUILD_PACKAGES[@]}" "${OPCUAD_TEST_PACKAGES[@]}"
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-60}

echo "== node-opcua for the interoperability tests"
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)

echo "== unit, interoperability and fuzz-corpus tests (ASan + UBSan)"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPCUAD_SANITIZE=address >/dev/null
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

echo "== concurrency tests (ThreadSanitizer)"
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPCUAD_SANITIZE=thread >/dev/null
cmake --build build/tsan -j "$jobs" --target unit_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build/tsan/tests/unit_tests '[live],[concurrency]'

echo "== release build (the daemon starts and reports its version)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPCUAD_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$jobs"
build/release/daemon/opcuad --version

echo "== fuzzing (libFuzzer, ${fuzz_seconds}s per target)"
CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPCUAD_FUZZ=ON >/dev/null
cmake --build build/fuzz -j "$jobs" --target fuzz_targets
build/fuzz/tests/fuzz/make_seed_corpus build/fuzz/corpus
for target in build/fuzz/tests/fuzz/*_fuzz; do
  name=$(basename "$target")
  mkdir -p "build/fuzz/corpus-run/$name"
  echo "-- $name"
  "$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "build/fuzz/corpus-run/$name" "build/fuzz/corpus/$name" 2>&1 | tail -n 12
done
echo "all tests passed"
