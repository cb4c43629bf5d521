#!/usr/bin/env bash
# Sets everything up and runs opcuad on its built-in default configuration (or pass opcuad's flags).
#   tools/run.sh                  # build (Release) and run
#   tools/run.sh --config FILE    # run with a configuration file
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
opcuad_install "${OPCUAD_BUILD_PACKAGES[@]}"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPCUAD_BUILD_TESTS=OFF >/dev/null
cmake --build build/release --target opcuad
exec build/release/daemon/opcuad "$@"
