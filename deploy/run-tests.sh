#!/usr/bin/env bash
# Quick start, the tests: installs the dependencies (Debian 12 packages),
# builds tunefleet with its GoogleTest suite and runs it with ctest on the
# OpenCL device PoCL provides (real compiler, real profiling events).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
# The PP-OCR models of the coverage acceptance test (OnnxMatch.
# RealModelsAreCovered skips without them, e.g. offline).
timeout 300 bash deploy/fetch-model.sh >/dev/null ||
  echo "run-tests: the PP-OCR models were not fetched; the real-model coverage test will skip" >&2
# ONNX Runtime (npm's onnxruntime-node, CPU) into .cache/ort: the oracle of
# the model-output tests (docs/ORT_ORACLE.md); they skip without it.
timeout 300 bash deploy/fetch-ort.sh >/dev/null ||
  echo "run-tests: ONNX Runtime was not fetched; the tests that compare with it will skip" >&2
# The tests that build an emitted library and its consumer with CMake (in
# their own folders under /tmp: emit_test, model_test, ...) compile through
# ccache too, with /tmp as its base directory: the library's runtime
# sources are the same in each, so all but the first take them from the
# cache (docs/BUILDING.md, "Time"). CMake reads these variables from the
# environment at each configure.
# shellcheck source=deploy/ccache.sh
source deploy/ccache.sh
if [ "$CCACHE_ON" = 1 ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=${TEST_TMPDIR:-/tmp}
fi
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600
