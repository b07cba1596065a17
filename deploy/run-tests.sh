#!/usr/bin/env bash
# Quick start, the tests: installs the dependencies (Debian 12 packages),
# builds tunefleet with its GoogleTest suite and runs it with ctest on the
# OpenCL device PoCL provides (real compiler, real profiling events).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
