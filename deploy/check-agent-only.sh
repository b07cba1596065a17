#!/usr/bin/env bash
# CI's check that tunefleet-agent builds alone: the agent-only component
# (-DTUNEFLEET_COMPONENTS=agent, cmake/Components.cmake) configured and
# built afresh with every other package's development files ABSENT, as on
# a board's sysroot or in the Android build. What the table says the agent
# needs (its Debian packages, the host's code generators, build-essential)
# and what those depend on stay in sight; the headers, CMake and
# pkg-config files and link libraries of every other installed package
# (XGBoost, SQLite, ONNX, cpp-httplib, prometheus-cpp, jemalloc, GTest, ...)
# are hidden: deploy/hide-packages.py writes whiteouts for an overlay of
# /usr in a mount namespace of this script's own (root, or a user namespace;
# nothing outside it changes). The configure runs under the component guard
# (cmake/ComponentGuard.cmake: a find_package() of tunefleet's own files for
# a package the agent does not need fails, naming it), and every library
# tunefleet-agent needs (readelf NEEDED) must belong to a package the
# agent's depend on.
#
#   bash deploy/check-agent-only.sh [BUILD_DIR]    # default build-agent-only
#
# Fails (exit 1, saying which step and why) when the agent needs, finds or
# links anything of another component: a find_package() made unconditional,
# a server-only library on the agent's link line, a header of one included.
# Where no mount namespace can be made (an unprivileged container), the
# packages stay in sight and the guard and the library check run alone; the
# log says so (HIDDEN=0 forces that, HIDDEN=1 makes it a failure).
# Environment: JOBS (default nproc), HIDDEN (auto, 1, 0).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "${1:-$ROOT/build-agent-only}")
JOBS=${JOBS:-$(nproc)}
HIDDEN=${HIDDEN:-auto}

log() { echo "agent-only check: $*" >&2; }
fail() {
  echo "agent-only check: FAILED: $*" >&2
  exit 1
}
now() { date +%s.%N | cut -c1-14; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
query() {  # query QUERY: cmake/Components.cmake's answer for the agent
  cmake -DCOMPONENTS=agent -DQUERY="$1" -DREQUIRED_ONLY=ON \
    -P "$ROOT/cmake/Components.cmake" | paste -sd' '
}

# --- in a mount namespace of our own, /usr without the others' files --------
if [ "${TUNEFLEET_AGENT_CHECK_NS:-}" = "" ]; then
  t_start=$(now)
  export TUNEFLEET_AGENT_CHECK_T0=$t_start
  if [ "$HIDDEN" != 0 ] && command -v unshare >/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount --propagation private)
    else ns=(unshare --map-root-user --mount --propagation private); fi
    if "${ns[@]}" true 2>/dev/null; then
      TUNEFLEET_AGENT_CHECK_NS=hidden exec "${ns[@]}" -- bash "$0" "$@"
    fi
    why="cannot make a mount namespace here (${ns[*]} failed)"
  else
    why=$([ "$HIDDEN" = 0 ] && echo "HIDDEN=0" || echo "unshare missing (util-linux)")
  fi
  [ "$HIDDEN" != 1 ] || fail "HIDDEN=1, but $why"
  log "WARNING: the other components' packages stay in sight: $why;" \
    "checking with the component guard and the agent's libraries only"
  TUNEFLEET_AGENT_CHECK_NS=visible exec bash "$0" "$@"
fi
t_start=${TUNEFLEET_AGENT_CHECK_T0:-$(now)}
mode=$TUNEFLEET_AGENT_CHECK_NS

agent_debs=$(query deb)
agent_host=$(query host)
read -r -a keep <<<"$agent_debs $agent_host build-essential"
work=$(mktemp -d /tmp/tunefleet-agent-only.XXXXXX)
cleanup() {
  local rc=$?
  if [ "$mode" = hidden ]; then
    umount /usr 2>/dev/null || umount -l /usr 2>/dev/null || true
    umount "$work/overlay" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

log "TUNEFLEET_COMPONENTS=agent: $(query dependencies)"
log "the agent's packages: ${keep[*]}"
if [ "$mode" = hidden ]; then
  # The whiteouts and the overlay's upper directory on a tmpfs: overlayfs
  # takes no upper directory on an overlay (a container's /tmp).
  mkdir -p "$work/overlay"
  mount -t tmpfs -o mode=755 tunefleet-agent-only "$work/overlay" ||
    fail "cannot mount a tmpfs at $work/overlay"
  mkdir -p "$work/overlay/upper" "$work/overlay/work"
  python3 "$ROOT/deploy/hide-packages.py" --keep "${keep[@]}" \
    --whiteouts "$work/overlay/upper" --closure "$work/closure" \
    --report "$work/hidden" ||
    fail "deploy/hide-packages.py (a package of the agent's not installed?" \
      "bash deploy/install-deps.sh)"
  mount -t overlay tunefleet-agent-only \
    -o "lowerdir=/usr,upperdir=$work/overlay/upper,workdir=$work/overlay/work" /usr ||
    fail "cannot mount an overlay on /usr (overlayfs; Linux 5.11 or later in a user namespace)"
  # The table's packages of the other components: none may be in sight.
  table_hidden=()
  for pkg in $(cmake -DQUERY=deb -DCOMPONENTS=tests,bench -P "$ROOT/cmake/Components.cmake"); do
    grep -qx "$pkg" "$work/closure" && continue
    dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null | grep -qx installed || continue
    table_hidden+=("$pkg")
    for f in $(dpkg-query -L "$pkg" | grep -E '^/usr/include/.*\.h(pp)?$|\.pc$|Config\.cmake$' | head -n 3); do
      [ ! -e "$f" ] || fail "$f (package $pkg) is still in sight under the overlay"
    done
  done
  log "hidden: $(wc -l < "$work/hidden") packages' headers, CMake and pkg-config" \
    "files and link libraries, the other components' among them: ${table_hidden[*]}"
else
  python3 "$ROOT/deploy/hide-packages.py" --keep "${keep[@]}" \
    --closure "$work/closure" ||
    fail "deploy/hide-packages.py (a package of the agent's not installed?" \
      "bash deploy/install-deps.sh)"
fi

# --- configure and build, from nothing ----------------------------------------
explain="A dependency of another component (server, CLI, tests) is now found,"
explain+=" included or linked by the agent-only build: find and link it only for"
explain+=" the components that need it (cmake/Components.cmake;"
explain+=" docs/BUILDING.md, \"Components\")."
# ccache, as deploy/build.sh uses it: the suite's build then takes the
# agent's objects from this one.
source "$ROOT/deploy/ccache.sh"
rm -rf "$BUILD"
t0=$(now)
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DTUNEFLEET_COMPONENTS=agent \
    -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$ROOT/cmake/ComponentGuard.cmake" \
    "${CCACHE_LAUNCHER[@]}" >"$work/configure.log" 2>&1; then
  sed -n '/CMake Error/,$p' "$work/configure.log" | head -n 40 >&2
  fail "configuring TUNEFLEET_COMPONENTS=agent (the other packages" \
    "$([ "$mode" = hidden ] && echo hidden || echo "in sight")). $explain"
fi
t_configure=$(elapsed "$t0")
log "configured in $t_configure s: $(grep -c ' project ' "$BUILD/component-guard.log")" \
  "find_package() calls of tunefleet's, $(grep -c ' dependency ' "$BUILD/component-guard.log")" \
  "of the packages' own (component-guard.log)"
t0=$(now)
if ! cmake --build "$BUILD" -j "$JOBS" >"$work/build.log" 2>&1; then
  if grep -qE ': (fatal )?error:|undefined reference|cannot find -l' "$work/build.log"; then
    grep -E -A3 ': (fatal )?error:|undefined reference|cannot find -l' "$work/build.log" |
      head -n 40 >&2
  else
    tail -n 30 "$work/build.log" >&2
  fi
  fail "building TUNEFLEET_COMPONENTS=agent (the other packages" \
    "$([ "$mode" = hidden ] && echo hidden || echo "in sight")). $explain"
fi
t_build=$(elapsed "$t0")
agent=$BUILD/device_agent/tunefleet-agent
[ -x "$agent" ] || fail "$agent was not built"
log "built in $t_build s (-j$JOBS): $(find "$BUILD" -name '*.a' | wc -l) libraries" \
  "and $(basename "$agent")"

# --- the libraries it needs ----------------------------------------------------
needed=$(readelf -d "$agent" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
ldd "$agent" >"$work/ldd" 2>&1 || { cat "$work/ldd" >&2; fail "ldd $agent"; }
summary=()
for lib in $needed; do
  path=$(awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }' "$work/ldd")
  if [ -z "$path" ] || [ "$path" = "not" ]; then
    fail "$lib, which tunefleet-agent needs, is not found (ldd)"
  fi
  pkg=$( { dpkg-query -S "$path" 2>/dev/null ||
           dpkg-query -S "$(realpath "$path")" 2>/dev/null ||
           dpkg-query -S "${path/#\/usr\/lib/\/lib}" 2>/dev/null; } |
         head -n1 | cut -d: -f1) || true
  [ -n "$pkg" ] || fail "$lib ($path): no package owns it"
  grep -qx "$pkg" "$work/closure" ||
    fail "tunefleet-agent needs $lib (package $pkg), which is none of the" \
      "agent's dependencies (${keep[*]}) nor theirs. $explain"
  summary+=("$lib ($pkg)")
done
log "tunefleet-agent needs only its own dependencies' libraries:"
printf '    %s\n' "${summary[@]}" >&2
log "PASS ($mode, configure $t_configure s, build $t_build s," \
  "total $(elapsed "$t_start") s)"
