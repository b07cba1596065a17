#!/usr/bin/env bash
# Makes the .deb packages tunefleet-agent, tunefleet-server and tunefleet
# (the CLI) from a configured build directory, with CPack
# (cmake/Packaging.cmake):
#
#   deploy/packaging/make-debs.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR: default ./build (a cross build such as build-arm64 makes arm64
# packages); OUT_DIR: default BUILD_DIR/packages. Prints the packages' paths.
# It configures BUILD_DIR again (for the CPack config), builds the three
# binaries (incremental) and runs cpack, each under `flock $BUILD_LOCK`
# (default /tmp/build.lock; BUILD_LOCK=none: no lock) where flock exists,
# so it can share a build directory with other builds. NO_BUILD=1 packages
# the binaries as they are. Build output goes to stderr.
# Needs dpkg-dev (dpkg-shlibdeps) and file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:-$root/build}")
out=$(realpath -m "${2:-$build/packages}")
lock=${BUILD_LOCK:-/tmp/build.lock}

die() { echo "make-debs: $*" >&2; exit 1; }
[ -f "$build/CMakeCache.txt" ] ||
  die "$build is not a configured build directory (cmake -S $root -B $build)"
for tool in cmake cpack dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null ||
    die "$tool missing (apt-get install cmake dpkg-dev file)"
done
locked() {
  if [ "$lock" != none ] && command -v flock >/dev/null; then
    flock "$lock" "$@"
  else
    "$@"
  fi
}

locked cmake "$build" >/dev/null
[ -f "$build/CPackConfig.cmake" ] ||
  die "$build has no CPackConfig.cmake: is cmake/Packaging.cmake included?"
if [ "${NO_BUILD:-0}" != 1 ]; then
  locked cmake --build "$build" -j "${JOBS:-2}" \
    --target tunefleet-agent tunefleet-server tunefleet >&2
fi
mkdir -p "$out"
rm -f "$out"/tunefleet*.deb
# The staging tree (_CPack_Packages) goes under OUT_DIR too.
locked cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 ||
  { cat "$out/cpack.log" >&2; die "cpack failed (log: $out/cpack.log)"; }
ls "$out"/tunefleet*.deb >/dev/null 2>&1 || die "cpack made no packages ($out/cpack.log)"
ls -1 "$out"/tunefleet*.deb
