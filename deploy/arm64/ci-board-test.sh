#!/usr/bin/env bash
# .ci/run's board step (CI_STEPS=board: a longer check, not in the default
# steps): deploy/arm64/board-test.sh --packages where this machine allows
# it, with the arm64 rootfs cached outside the clone, keyed by its package
# list, so that a machine CI uses again skips
# mmdebstrap; where it does not, SKIPPED with the reason (exit 77), never a
# silent pass.
#
#   bash deploy/arm64/ci-board-test.sh
#
# Needs: root; the cache directory with 4 GB free; deb.debian.org reachable
# where something is missing (the cross build's packages,
# deploy/arm64/install-deps.sh, or the rootfs of the current key); a
# usable binfmt_misc (qemu-aarch64 registered and an arm64 binary run,
# arch-test). Then: deploy/arm64/install-deps.sh, and board-test.sh
# --packages with ARM64_CACHE in the cache directory (the rootfs tarball,
# the unpacked rootfs, PoCL's kernel cache; only the two newest tarballs
# are kept) under flock, the server and CLI from build/ (made by
# deploy/run-tests.sh before), the arm64 agent and CLI cross-built afresh
# into build-arm64/ of the clone.
# Environment: TUNEFLEET_CI_BOARD: auto (default), 1 (a skip fails: the
# machine is meant to run it), 0 (skipped, saying so); TUNEFLEET_CI_CACHE
# (default /var/cache/tunefleet-ci); BUILD_DIR (default build).
# Exit: 0 passed, 1 failed, 77 skipped.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODE=${TUNEFLEET_CI_BOARD:-auto}
CACHE=${TUNEFLEET_CI_CACHE:-/var/cache/tunefleet-ci}
HOST_BUILD=$(realpath -m "${BUILD_DIR:-$ROOT/build}")

log() { echo "board test (CI): $*" >&2; }
skip() {
  if [ "$MODE" = 1 ]; then
    echo "board test (CI): FAILED: TUNEFLEET_CI_BOARD=1, but it cannot run here: $*" >&2
    exit 1
  fi
  echo "board test (CI): SKIPPED: $*" >&2
  exit 77
}
now() { date +%s.%N | cut -c1-14; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

case "$MODE" in
  0) skip "TUNEFLEET_CI_BOARD=0" ;;
  1|auto) ;;
  *) echo "board test (CI): TUNEFLEET_CI_BOARD=$MODE: auto, 1 or 0" >&2; exit 1 ;;
esac
[ "$(id -u)" -eq 0 ] ||
  skip "not root (mmdebstrap, binfmt_misc, the chroot and dpkg in it need root)"
mkdir -p "$CACHE/arm64" 2>/dev/null || skip "cannot make the cache directory $CACHE/arm64"
free_kb=$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')
[ "${free_kb:-0}" -ge $((4 * 1024 * 1024)) ] ||
  skip "$((${free_kb:-0} / 1024)) MB free at $CACHE; the rootfs and the cross build need 4 GB"

export ARM64_CACHE=$CACHE/arm64
# shellcheck source=common.sh
source "$HERE/common.sh"
key=$(arm64_rootfs_key)
tarball=$ARM64_CACHE/rootfs-$key.tar.zst

# What is missing, and whether Debian's mirrors are there to fetch it.
missing=()
for tool in mmdebstrap arch-test zstd update-binfmts aarch64-linux-gnu-g++ file; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || missing+=(qemu-user-static)
[ -f "$tarball" ] || missing+=("the rootfs of key $key")
if [ ${#missing[@]} -gt 0 ]; then
  if ! timeout 15 bash -c 'exec 3<>/dev/tcp/deb.debian.org/80' 2>/dev/null; then
    skip "deb.debian.org:80 is not reachable, and ${missing[*]} must be fetched"
  fi
fi

t_start=$(now)
t0=$(now)
bash "$HERE/install-deps.sh" >"$ARM64_CACHE/install-deps.log" 2>&1 || {
  tail -n 20 "$ARM64_CACHE/install-deps.log" >&2
  echo "board test (CI): FAILED: deploy/arm64/install-deps.sh" >&2
  exit 1
}
t_deps=$(elapsed "$t0")
log "deploy/arm64/install-deps.sh: $t_deps s"

# binfmt_misc: qemu-aarch64 registered (F flag) and an arm64 binary runs.
if ! (arm64_ensure_binfmt) 2>"$ARM64_CACHE/binfmt.err"; then
  skip "binfmt_misc is not usable here: $(tail -n1 "$ARM64_CACHE/binfmt.err")" \
    "(a container without the privilege to mount or register it?)"
fi
arch-test arm64 >/dev/null 2>&1 ||
  skip "binfmt_misc has qemu-aarch64, but an arm64 binary does not run (arch-test arm64)"

# The two newest tarballs stay (another branch's key may come back).
find "$ARM64_CACHE" -maxdepth 1 -name 'rootfs-*.tar.zst' ! -path "$tarball" \
    -printf '%T@ %p\n' | sort -rn | tail -n +2 | cut -d' ' -f2- | xargs -r rm -f
if [ -f "$tarball" ]; then
  log "the rootfs of key $key is cached ($tarball): no mmdebstrap"
else
  log "no rootfs of key $key in $ARM64_CACHE: mmdebstrap from scratch (5-6 min)"
fi

log "TUNEFLEET_HOST_BUILD=$HOST_BUILD ARM64_CACHE=$ARM64_CACHE" \
  "deploy/arm64/board-test.sh --packages"
t0=$(now)
rc=0
exec 9>"$ARM64_CACHE/.lock"
flock 9
TUNEFLEET_HOST_BUILD=$HOST_BUILD bash "$HERE/board-test.sh" --packages || rc=$?
flock -u 9
t_test=$(elapsed "$t0")
if [ "$rc" -ne 0 ]; then
  echo "board test (CI): FAILED: deploy/arm64/board-test.sh --packages (exit $rc, $t_test s)" >&2
  exit 1
fi
log "PASS (install-deps $t_deps s, board-test.sh --packages $t_test s," \
  "total $(elapsed "$t_start") s)"
