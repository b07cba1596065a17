#!/usr/bin/env bash
# Configures and builds tunefleet in ./build (Release). Used by the Quick
# start scripts; safe to run again (incremental). TARGETS="a b" builds only
# those targets (and what they need), e.g. the quick start's binaries;
# default: everything (the libraries, binaries, tests and benchmarks).
# Compiles through ccache where it is installed (TUNEFLEET_CCACHE=0: not),
# with the checkout as its base directory, so that another build folder of
# the same checkout (deploy/check-agent-only.sh's) shares its objects.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/ccache.sh
source deploy/ccache.sh
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  "${CCACHE_LAUNCHER[@]}"
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086  # a list of target names
  cmake --build "$BUILD_DIR" -j "$JOBS" --target $TARGETS
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
