#!/usr/bin/env bash
# Makes the .deb packages tunefleet-agent, tunefleet-server and tunefleet
# (the CLI) from a configured build directory, with CPack
# (cmake/Packaging.cmake):
#
#   deploy/packaging/make-debs.sh [--components LIST] [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR: default ./build (a cross build such as build-arm64 makes arm64
# packages); OUT_DIR: default BUILD_DIR/packages. Prints the packages' paths.
# --components LIST (or COMPONENTS=LIST): which packages, comma-separated,
# of agent (tunefleet-agent), server (tunefleet-server) and cli (tunefleet).
# Default: all three; in a cross build (packages for another architecture
# than this machine's) agent,cli: a board runs the agent, the server stays
# on a host (--components agent,server,cli cross-builds the server too);
# of these, those the build directory is configured with
# (TUNEFLEET_COMPONENTS: an agent-only build makes tunefleet-agent alone).
# It configures BUILD_DIR again (for the CPack config), builds the
# components' binaries (incremental) and runs cpack, each under
# `flock $BUILD_LOCK` (default /tmp/build.lock; BUILD_LOCK=none: no lock)
# where flock exists, so it can share a build directory with other builds.
# NO_BUILD=1 packages the binaries as they are. Then it checks that each
# package's binary is an ELF file of the package's Architecture (`file`).
# Build output goes to stderr. Needs cmake, dpkg-dev (dpkg-shlibdeps) and
# file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

die() { echo "make-debs: $*" >&2; exit 1; }
components=${COMPONENTS:-}
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --components) [ $# -ge 2 ] || die "--components needs a list (agent,server,cli)"
                  components=$2; shift ;;
    --components=*) components=${1#--components=} ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) die "unknown option $1 (--help)" ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ ${#args[@]} -le 2 ] || die "too many arguments: ${args[*]} (--help)"
build=$(realpath -m "${args[0]:-$root/build}")
out=$(realpath -m "${args[1]:-$build/packages}")
lock=${BUILD_LOCK:-/tmp/build.lock}

[ -f "$build/CMakeCache.txt" ] ||
  die "$build is not a configured build directory (cmake -S $root -B $build)"
for tool in cmake cpack dpkg-shlibdeps dpkg-deb file; do
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
deb_arch=$(sed -n 's/^set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "\(.*\)")$/\1/p' \
             "$build/CPackConfig.cmake")
[ -n "$deb_arch" ] || die "no CPACK_DEBIAN_PACKAGE_ARCHITECTURE in $build/CPackConfig.cmake"
host_arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)
# The components the build directory has (TUNEFLEET_COMPONENTS,
# cmake/Components.cmake): an agent-only build packages the agent only.
configured=$(sed -n 's/^set(CPACK_COMPONENTS_ALL "\(.*\)")$/\1/p' "$build/CPackConfig.cmake" |
               tr ';' ' ')
if [ -z "$components" ]; then
  if [ "$deb_arch" = "$host_arch" ]; then components=agent,server,cli
  else components=agent,cli; fi
  components=$(for c in ${components//,/ }; do
                 [[ " $configured " == *" $c "* ]] && echo "$c"; done | paste -sd,)
  [ -n "$components" ] || die "$build has none of the components to package (it has: $configured)"
fi

# Component -> build target, binary and package name.
targets=() cpack_components=() binaries=() names=()
IFS=, read -r -a wanted <<<"$components"
for c in "${wanted[@]}"; do
  case "$c" in
    agent) targets+=(tunefleet-agent); binaries+=(/usr/bin/tunefleet-agent); names+=(tunefleet-agent) ;;
    server) targets+=(tunefleet-server); binaries+=(/usr/bin/tunefleet-server); names+=(tunefleet-server) ;;
    cli) targets+=(tunefleet); binaries+=(/usr/bin/tunefleet); names+=(tunefleet) ;;
    *) die "unknown component '$c' in --components $components (agent, server, cli)" ;;
  esac
  [[ " $configured " == *" $c "* ]] ||
    die "$build is configured without the component $c (it has: $configured):" \
      "configure it with -DTUNEFLEET_COMPONENTS=all, or a list naming $c"
  cpack_components+=("$c")
done
[ ${#targets[@]} -gt 0 ] || die "--components is empty"

if [ "${NO_BUILD:-0}" != 1 ]; then
  locked cmake --build "$build" -j "${JOBS:-2}" --target "${targets[@]}" >&2
fi
mkdir -p "$out"
rm -f "$out"/tunefleet*.deb
# The staging tree (_CPack_Packages) goes under OUT_DIR too.
locked cpack --config "$build/CPackConfig.cmake" -B "$out" \
  -D "CPACK_COMPONENTS_ALL=$(IFS=';'; echo "${cpack_components[*]}")" \
  >"$out/cpack.log" 2>&1 ||
  { cat "$out/cpack.log" >&2; die "cpack failed (log: $out/cpack.log)"; }

# Each package: there, of the build's architecture, its binary an ELF file
# of that architecture (a cross build that packaged a host binary, or the
# reverse, fails here).
case $deb_arch in
  amd64) elf='ELF 64-bit LSB .*x86-64' ;;
  arm64) elf='ELF 64-bit LSB .*ARM aarch64' ;;
  armhf) elf='ELF 32-bit LSB .*ARM, EABI5' ;;
  i386) elf='ELF 32-bit LSB .*Intel 80386' ;;
  riscv64) elf='ELF 64-bit LSB .*RISC-V' ;;
  *) elf='ELF' ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
debs=()
for i in "${!names[@]}"; do
  deb=$(ls "$out/${names[$i]}"_*_"$deb_arch".deb 2>/dev/null | head -n1) || true
  [ -n "$deb" ] || die "cpack made no ${names[$i]} package for $deb_arch (log: $out/cpack.log)"
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$deb_arch" ] ||
    die "$deb: Architecture $(dpkg-deb -f "$deb" Architecture), not $deb_arch"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ".${binaries[$i]}" >"$tmp/binary" ||
    die "$deb has no ${binaries[$i]}"
  file -b "$tmp/binary" | grep -Eq "$elf" ||
    die "$deb: ${binaries[$i]} is not a $deb_arch binary: $(file -b "$tmp/binary")"
  echo "make-debs: $(basename "$deb"): ${binaries[$i]}: $(file -b "$tmp/binary" | cut -d, -f1-2)" >&2
  debs+=("$deb")
done
printf '%s\n' "${debs[@]}"
