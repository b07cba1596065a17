#!/usr/bin/env bash
# Checks the Android build's dependency list against the agent-only
# component, so that the day an NDK is at hand it is the agent alone that
# builds: every package an agent-only configure finds (tunefleet's own
# find_package() calls, cmake/Components.cmake, and those the packages'
# configs make in turn: gRPC's c-ares, re2, ZLIB, ...) must be one that
# deploy/android/build-agent.sh provides (`--list-deps`: built from source,
# headers copied, the NDK's, a host program), and everything it builds or
# copies must be one that configure finds: nothing of the server's, the
# CLI's or the tests'. Needs no NDK; CI runs it (.ci/run).
#
#   bash deploy/android/check-deps.sh [GUARD_LOG]
#
# GUARD_LOG: the component-guard.log of an agent-only configure under
# cmake/ComponentGuard.cmake (deploy/check-agent-only.sh leaves one in
# build-agent-only/). Without it, this configures the agent-only component
# on the host in a temporary directory first (about 10 s).
# Exits 1 naming each mismatch.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() { echo "android check-deps: FAILED: $*" >&2; exit 1; }
log() { echo "android check-deps: $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
guard_log=${1:-}
if [ -z "$guard_log" ]; then
  log "configuring the agent-only component on the host ($tmp/build)"
  cmake -S "$ROOT" -B "$tmp/build" -DTUNEFLEET_COMPONENTS=agent \
    -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$ROOT/cmake/ComponentGuard.cmake" \
    >"$tmp/configure.log" 2>&1 ||
    { tail -n 30 "$tmp/configure.log" >&2; die "the agent-only configure failed"; }
  guard_log=$tmp/build/component-guard.log
fi
[ -s "$guard_log" ] || die "$guard_log: missing or empty (an agent-only configure under cmake/ComponentGuard.cmake writes it)"
components=$(sed -n 's/^TUNEFLEET_COMPONENTS:[A-Z]*=//p' "$(dirname "$guard_log")/CMakeCache.txt" 2>/dev/null || true)
[ -z "$components" ] || [ "$components" = agent ] ||
  die "$guard_log is of TUNEFLEET_COMPONENTS=$components, not agent"

# What the agent-only configure finds: package -> project|dependency.
declare -A found
while read -r package from _; do
  [ "${found[$package]:-}" = project ] || found[$package]=$from
done <"$guard_log"
# What the table says the agent needs (each must have been found).
for package in $(cmake -DCOMPONENTS=agent -DQUERY=dependencies -P "$ROOT/cmake/Components.cmake"); do
  [ -n "${found[$package]:-}" ] ||
    die "cmake/Components.cmake lists $package for the agent, but $guard_log has no find_package($package)"
done

bash "$HERE/build-agent.sh" --list-deps >"$tmp/provides" ||
  die "deploy/android/build-agent.sh --list-deps failed"
declare -A provides
built=() copied=()
while read -r first second third; do
  case "$first" in
    -) if [ "$second" = source ]; then built+=("$third"); else copied+=("$third"); fi ;;
    *) provides[$first]="$second${third:+ $third}" ;;
  esac
done <"$tmp/provides"

errors=()
printf '    %-14s %-10s %s\n' "package" "found by" "on Android" >&2
for package in $(printf '%s\n' "${!found[@]}" | sort -f); do
  how=${provides[$package]:-}
  printf '    %-14s %-10s %s\n' "$package" "${found[$package]}" "${how:-MISSING}" >&2
  [ -n "$how" ] || errors+=("the agent-only configure finds $package (${found[$package]}), which deploy/android/build-agent.sh does not provide: add it to DEPS or HEADER_PKGS and to PROVIDES there")
done
for package in "${!provides[@]}"; do
  [ -n "${found[$package]:-}" ] ||
    errors+=("deploy/android/build-agent.sh provides $package (${provides[$package]}), which the agent-only configure does not find: drop it there (only the agent is built for Android)")
done
# Every recipe and header package is some package's provider, and back.
for dep in "${built[@]}"; do
  printf '%s\n' "${provides[@]}" | grep -qx "source $dep" ||
    errors+=("deploy/android/build-agent.sh builds $dep (DEPS), which no package in PROVIDES names")
done
for pkg in "${copied[@]}"; do
  printf '%s\n' "${provides[@]}" | grep -qx "headers $pkg" ||
    errors+=("deploy/android/build-agent.sh copies $pkg (HEADER_PKGS), which no package in PROVIDES names")
done
for how in "${provides[@]}"; do
  case "$how" in
    "source "*) printf '%s\n' "${built[@]}" | grep -qx "${how#source }" ||
                  errors+=("PROVIDES names '$how', which is not in DEPS") ;;
    "headers "*) printf '%s\n' "${copied[@]}" | grep -qx "${how#headers }" ||
                  errors+=("PROVIDES names '$how', which is not in HEADER_PKGS") ;;
    ndk|host) ;;
    *) errors+=("PROVIDES: '$how' is none of source, headers, ndk, host") ;;
  esac
done
if [ ${#errors[@]} -gt 0 ]; then
  printf 'android check-deps: %s\n' "${errors[@]}" >&2
  die "deploy/android's dependency list does not match the agent-only component"
fi
log "PASS: the ${#found[@]} packages the agent-only configure finds are the" \
  "ones deploy/android provides (${#built[@]} built from source," \
  "${#copied[@]} header packages copied, the rest the NDK's or the host's)"
