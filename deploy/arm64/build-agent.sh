#!/usr/bin/env bash
# Cross-builds tunefleet-agent (and, with --cli, the tunefleet CLI) for
# aarch64 Linux into build-arm64/, against the arm64 rootfs of
# make-rootfs.sh (made first if missing), with the host's protoc and
# grpc_cpp_plugin.
#
#   bash deploy/arm64/build-agent.sh [--cli] [--jobs N]
#
# The agent is the agent-only component (-DTUNEFLEET_COMPONENTS=agent,
# cmake/Components.cmake), configured and built with every rootfs package
# but the agent's (and what they depend on) hidden and the component guard
# on; every library it needs must be of those packages. --cli then
# configures agent,cli (the CLI links the server's libraries) and builds
# tunefleet. Needs root (the rootfs, the mount namespace).
# Environment: ARM64_BUILD_DIR (default build-arm64), ARM64_BUILD_TYPE
# (default Release), ARM64_ROOTFS (default .cache/arm64/rootfs), ARM64_JOBS,
# ARM64_CCACHE (default 1: compile through ccache where installed; 0: not).
# Prints the path of the agent on stdout.
set -euo pipefail
source "$(dirname "$0")/common.sh"

with_cli=0
jobs=${ARM64_JOBS:-2}
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) with_cli=1 ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
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

configure() {  # configure COMPONENTS
  local launcher=()
  if [ "${ARM64_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  mkdir -p "$ARM64_BUILD_DIR"
  # A build directory configured against another rootfs (CI's cache in
  # /var/cache/tunefleet-ci, then ctest's in .cache/arm64) keeps that
  # rootfs's find_package() results, which the linker cannot use under
  # this --sysroot: configure it afresh (ccache keeps the rebuild cheap).
  # The rootfs it was configured against is kept in a stamp beside the
  # cache; a cache without the stamp is configured afresh too.
  local cache="$ARM64_BUILD_DIR/CMakeCache.txt" stamp="$ARM64_BUILD_DIR/.tunefleet-sysroot"
  if [ -f "$cache" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$ARM64_ROOTFS" ]; then
    echo "[arm64] $ARM64_BUILD_DIR was configured against another rootfs: configuring it afresh" >&2
    rm -rf "$cache" "$ARM64_BUILD_DIR/CMakeFiles"
  fi
  printf '%s\n' "$ARM64_ROOTFS" > "$stamp"
  cmake -S "$TUNEFLEET_ROOT" -B "$ARM64_BUILD_DIR" ${launcher[@]+"${launcher[@]}"} \
    -DCMAKE_TOOLCHAIN_FILE="$TUNEFLEET_ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
    -DTUNEFLEET_SYSROOT="$ARM64_ROOTFS" \
    -DCMAKE_BUILD_TYPE="${ARM64_BUILD_TYPE:-Release}" \
    -DTUNEFLEET_COMPONENTS="$1" \
    -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$TUNEFLEET_ROOT/cmake/ComponentGuard.cmake" \
    -DTUNEFLEET_BUILD_TESTS=OFF -DTUNEFLEET_BUILD_BENCH=OFF >"$ARM64_BUILD_DIR/configure.log" 2>&1 || {
    sed -n '/CMake Error/,$p' "$ARM64_BUILD_DIR/configure.log" | head -n 40 >&2
    arm64_die "configuring $ARM64_BUILD_DIR (TUNEFLEET_COMPONENTS=$1) failed" \
      "(log: $ARM64_BUILD_DIR/configure.log)"
  }
}

# The agent alone: TUNEFLEET_COMPONENTS=agent under the component guard,
# with the rootfs's usr/ showing only the agent's packages
# (cmake/Components.cmake) and what they depend on, every other package's
# development files hidden (arm64_without_others): an agent that needs
# anything of the server's or the CLI's fails here, as on a sysroot without
# them.
closure=$(mktemp)
trap 'rm -f "$closure"' EXIT
t0=$(arm64_now)
export -f configure arm64_die arm64_log
export TUNEFLEET_ROOT ARM64_BUILD_DIR ARM64_ROOTFS ARM64_BUILD_TYPE ARM64_CCACHE
ARM64_HIDE_CLOSURE=$closure arm64_without_others \
  "${ARM64_SYSTEM_PACKAGES[*]} ${ARM64_AGENT_PACKAGES[*]}" \
  bash -c 'configure agent' >&2
arm64_log "timing: configure (agent only, the other packages hidden) $(arm64_elapsed "$t0") s"
t0=$(arm64_now)
ARM64_HIDE_CLOSURE="" arm64_without_others \
  "${ARM64_SYSTEM_PACKAGES[*]} ${ARM64_AGENT_PACKAGES[*]}" \
  cmake --build "$ARM64_BUILD_DIR" -j"$jobs" --target tunefleet-agent >&2 ||
  arm64_die "building tunefleet-agent (agent only, the other packages hidden) failed"
arm64_log "timing: build tunefleet-agent $(arm64_elapsed "$t0") s (-j$jobs)"

# Every library it needs is of an agent's package (or what those depend on).
agent=$ARM64_BUILD_DIR/device_agent/tunefleet-agent
for lib in $(arm64_needed_libs "$agent"); do
  pkg=$(arm64_package_of "$lib")
  [ -n "$pkg" ] || arm64_die "tunefleet-agent needs $lib, which no package of the rootfs ships"
  grep -qx "$pkg" "$closure" ||
    arm64_die "tunefleet-agent needs $lib (package $pkg), which is none of the" \
      "agent's dependencies (cmake/Components.cmake) nor theirs"
done
arm64_log "tunefleet-agent: every library it needs is of the agent's packages"

if [ "$with_cli" = 1 ]; then
  # The CLI (which links the server's libraries): the whole rootfs in sight.
  t0=$(arm64_now)
  configure "$ARM64_COMPONENTS"
  arm64_log "timing: configure ($ARM64_COMPONENTS) $(arm64_elapsed "$t0") s"
  t0=$(arm64_now)
  cmake --build "$ARM64_BUILD_DIR" -j"$jobs" --target tunefleet >&2
  arm64_log "timing: build tunefleet $(arm64_elapsed "$t0") s (-j$jobs)"
fi

file -L "$agent" | grep -q 'ARM aarch64' ||
  arm64_die "$agent is not an aarch64 binary: $(file -L "$agent")"
file -L "$agent" >&2
[ "$with_cli" = 1 ] && file -L "$ARM64_BUILD_DIR/cli/tunefleet" >&2
echo "$agent"
