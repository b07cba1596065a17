#!/usr/bin/env bash
# Cross-builds tunefleet-agent (and, with --cli, the tunefleet CLI) for
# aarch64 Linux into build-arm64/, against the arm64 rootfs of
# make-rootfs.sh (made first if missing), with the host's protoc and
# grpc_cpp_plugin.
#
#   bash deploy/arm64/build-agent.sh [--cli] [--jobs N]
#
# Environment: ARM64_BUILD_DIR (default build-arm64), ARM64_BUILD_TYPE
# (default Release), ARM64_ROOTFS (default .cache/arm64/rootfs).
# Prints the path of the agent on stdout.
set -euo pipefail
source "$(dirname "$0")/common.sh"

with_cli=0
jobs=${ARM64_JOBS:-2}
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) with_cli=1 ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) arm64_die "build-agent.sh: unknown argument $1" ;;
  esac
  shift
done

command -v aarch64-linux-gnu-g++ >/dev/null ||
  arm64_die "aarch64-linux-gnu-g++ missing: bash deploy/arm64/install-deps.sh"
for tool in protoc grpc_cpp_plugin; do
  command -v $tool >/dev/null ||
    arm64_die "host $tool missing: bash deploy/install-deps.sh"
done

# Makes the rootfs, or checks that it is current (a fraction of a second).
bash "$(dirname "$0")/make-rootfs.sh" >/dev/null

# Generated code must come from the protoc of the sysroot's libprotobuf.
host_protoc=$(protoc --version | awk '{ print $2 }')
sysroot_protobuf=$(awk '/define PROTOBUF_VERSION /{ v = $3;
    printf "%d.%d.%d", v / 1000000, (v / 1000) % 1000, v % 1000 }' \
  "$ARM64_ROOTFS/usr/include/google/protobuf/port_def.inc")
[ "$host_protoc" = "$sysroot_protobuf" ] ||
  arm64_die "host protoc $host_protoc does not match the sysroot's" \
    "libprotobuf $sysroot_protobuf"

t0=$(arm64_now)
cmake -S "$TUNEFLEET_ROOT" -B "$ARM64_BUILD_DIR" \
  -DCMAKE_TOOLCHAIN_FILE="$TUNEFLEET_ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DTUNEFLEET_SYSROOT="$ARM64_ROOTFS" \
  -DCMAKE_BUILD_TYPE="${ARM64_BUILD_TYPE:-Release}" \
  -DTUNEFLEET_BUILD_TESTS=OFF -DTUNEFLEET_BUILD_BENCH=OFF >/dev/null
arm64_log "timing: configure $(arm64_elapsed "$t0") s"

targets=(tunefleet-agent)
[ "$with_cli" = 1 ] && targets+=(tunefleet)
t0=$(arm64_now)
cmake --build "$ARM64_BUILD_DIR" -j"$jobs" --target "${targets[@]}" >&2
arm64_log "timing: build ${targets[*]} $(arm64_elapsed "$t0") s (-j$jobs)"

agent=$ARM64_BUILD_DIR/device_agent/tunefleet-agent
file -L "$agent" | grep -q 'ARM aarch64' ||
  arm64_die "$agent is not an aarch64 binary: $(file -L "$agent")"
file -L "$agent" >&2
[ "$with_cli" = 1 ] && file -L "$ARM64_BUILD_DIR/cli/tunefleet" >&2
echo "$agent"
