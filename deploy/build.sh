#!/usr/bin/env bash
# Configures and builds tunefleet in ./build (Release). Used by the Quick
# start scripts; safe to run again (incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release}
cmake --build "$BUILD_DIR" -j "$JOBS"
