# Shared by deploy/arm64/*.sh (sourced, not run): paths, the rootfs's
# package list and cache key, binfmt_misc for qemu-aarch64, timings.

TUNEFLEET_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Everything made here lives under the git-ignored .cache/ of the checkout.
ARM64_CACHE=${ARM64_CACHE:-$TUNEFLEET_ROOT/.cache/arm64}
# The arm64 root filesystem: the sysroot of the cross build and the chroot
# the board test runs the agent in.
ARM64_ROOTFS=${ARM64_ROOTFS:-$ARM64_CACHE/rootfs}
ARM64_BUILD_DIR=${ARM64_BUILD_DIR:-$TUNEFLEET_ROOT/build-arm64}
# PoCL's kernel cache, kept between runs (bound into the chroot); a user's
# own for a non-root user (board-test.sh in a user namespace: root's is not
# theirs to write).
if [ "$(id -u)" -eq 0 ]; then
  ARM64_POCL_CACHE=${ARM64_POCL_CACHE:-$ARM64_CACHE/pocl-kcache}
else
  ARM64_POCL_CACHE=${ARM64_POCL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tunefleet-arm64/pocl-kcache}
fi

arm64_log() { echo "[arm64 $(date +%H:%M:%S)] $*" >&2; }
arm64_die() { echo "[arm64] error: $*" >&2; exit 1; }

ARM64_SUITE=bookworm
ARM64_MIRRORS=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)
# What the cross build links against and what the agent needs to run. The
# -dev packages are those of the components cross-built here, as
# cmake/Components.cmake says: the agent (build-agent.sh) and the CLI
# (build-agent.sh --cli, board-test.sh --cli and --packages), which links
# the server's libraries; the agent alone is built with the others hidden
# (build-agent.sh). Then the C and C++ libraries, the ICD loader, PoCL and
# clinfo. Changing the list changes the cache key, so a new rootfs is made.
ARM64_COMPONENTS=agent,cli
arm64_component_packages() {  # arm64_component_packages COMPONENTS
  command -v cmake >/dev/null ||
    arm64_die "cmake missing: bash deploy/install-deps.sh"
  cmake -DCOMPONENTS="$1" -DQUERY=deb -DREQUIRED_ONLY=ON \
    -P "$TUNEFLEET_ROOT/cmake/Components.cmake" ||
    arm64_die "cmake/Components.cmake: no package list for $1"
}
ARM64_SYSTEM_PACKAGES=(libc6-dev libstdc++-12-dev)
ARM64_RUN_PACKAGES=(ocl-icd-libopencl1 pocl-opencl-icd clinfo)
_arm64_list=$(arm64_component_packages agent) || exit 1
read -r -d '' -a ARM64_AGENT_PACKAGES <<<"$_arm64_list" || true
_arm64_list=$(arm64_component_packages "$ARM64_COMPONENTS") || exit 1
read -r -d '' -a ARM64_PACKAGES <<<"$_arm64_list" || true
if [ ${#ARM64_AGENT_PACKAGES[@]} -eq 0 ] || [ ${#ARM64_PACKAGES[@]} -eq 0 ]; then
  arm64_die "cmake/Components.cmake gave no packages"
fi
ARM64_PACKAGES=("${ARM64_SYSTEM_PACKAGES[@]}" "${ARM64_PACKAGES[@]}" "${ARM64_RUN_PACKAGES[@]}")
ARM64_VARIANT=apt

# The cache key: a hash of everything that decides the rootfs's contents.
arm64_rootfs_key() {
  {
    echo "arch=arm64 suite=$ARM64_SUITE variant=$ARM64_VARIANT"
    printf '%s\n' "${ARM64_MIRRORS[@]}"
    printf '%s\n' "${ARM64_PACKAGES[@]}" | sort -u
  } | sha256sum | cut -c1-16
}

arm64_need_root() {
  [ "$(id -u)" -eq 0 ] ||
    arm64_die "$1 needs root (mmdebstrap, binfmt_misc, chroot with bind mounts)"
}

# Makes arm64 ELF binaries run through qemu-user: binfmt_misc mounted and
# the qemu-aarch64 entry enabled, with the F flag (the interpreter is opened
# when registered, so it works inside a chroot without copying qemu in).
arm64_ensure_binfmt() {
  if [ "${ARM64_USERNS:-0}" = 1 ]; then
    # In a user namespace (board-test.sh as a non-root user): nothing can be
    # registered here, the host's entry is used as it is.
    grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null ||
      arm64_die "binfmt_misc has no enabled qemu-aarch64 entry; registering it" \
        "needs root, once: sudo bash deploy/arm64/install-deps.sh &&" \
        "sudo update-binfmts --enable qemu-aarch64"
    grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
      arm64_die "binfmt qemu-aarch64 lacks the F (fix binary) flag; chroots need it"
    return 0
  fi
  command -v update-binfmts >/dev/null ||
    arm64_die "update-binfmts missing: bash deploy/arm64/install-deps.sh"
  [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] ||
    arm64_die "qemu-user-static missing: bash deploy/arm64/install-deps.sh"
  if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
      arm64_die "cannot mount binfmt_misc on /proc/sys/fs/binfmt_misc"
  fi
  if ! grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
    update-binfmts --enable qemu-aarch64 ||
      arm64_die "update-binfmts --enable qemu-aarch64 failed"
  fi
  grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
    arm64_die "binfmt qemu-aarch64 lacks the F (fix binary) flag; chroots need it"
}

# arm64_without_others "KEEP..." COMMAND...: COMMAND in a mount namespace
# of its own where the rootfs's usr/ is an overlay without the development
# files (headers, CMake and pkg-config files, link libraries) of every
# package but KEEP (space-separated) and what they depend on
# (deploy/hide-packages.py); the rootfs itself is not written. With
# ARM64_HIDE_CLOSURE set, the kept packages are listed in that file. Root.
arm64_without_others() {
  local keep=$1
  shift
  command -v python3 >/dev/null || arm64_die "python3 missing"
  # shellcheck disable=SC2016  # expanded by the inner bash
  unshare --mount --propagation private -- bash -euc '
    rootfs=$1 keep=$2 hide=$3 closure=$4
    shift 4
    tmp=$(mktemp -d /tmp/tunefleet-arm64-hide.XXXXXX)
    trap "umount -l \"\$rootfs/usr\" 2>/dev/null; umount -l \"\$tmp\" 2>/dev/null; rmdir \"\$tmp\"" EXIT
    # On a tmpfs: overlayfs takes no upper directory on an overlay.
    mount -t tmpfs -o mode=755 tunefleet-arm64-hide "$tmp"
    mkdir "$tmp/upper" "$tmp/work"
    # shellcheck disable=SC2086
    python3 "$hide" --root "$rootfs" --keep $keep --whiteouts "$tmp/upper" \
      ${closure:+--closure "$closure"}
    mount -t overlay tunefleet-arm64-hide \
      -o "lowerdir=$rootfs/usr,upperdir=$tmp/upper,workdir=$tmp/work" "$rootfs/usr"
    "$@"' _ "$ARM64_ROOTFS" "$keep" "$TUNEFLEET_ROOT/deploy/hide-packages.py" \
    "${ARM64_HIDE_CLOSURE:-}" "$@"
}

# The shared libraries an ELF file needs (its NEEDED entries), a line each.
arm64_needed_libs() {  # arm64_needed_libs FILE
  readelf -d -W "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}
# The package of the rootfs (its own dpkg database) that ships the library
# LIB in /usr/lib or /lib; prints nothing when none does.
arm64_package_of() {  # arm64_package_of LIB
  local path pkg
  for path in {/usr,}/lib/aarch64-linux-gnu/"$1"; do
    [ -e "$ARM64_ROOTFS$path" ] || continue
    pkg=$(dpkg-query --admindir="$ARM64_ROOTFS/var/lib/dpkg" -S "$path" 2>/dev/null |
            head -n1 | cut -d: -f1) || true
    if [ -n "$pkg" ]; then
      echo "$pkg"
      return 0
    fi
  done
}

# Seconds since the epoch, with milliseconds.
arm64_now() { date +%s.%N | cut -c1-14; }
arm64_elapsed() { awk -v a="$1" -v b="$(arm64_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Mount points under the rootfs (deepest first), for checks and cleanup.
arm64_mounts_under() {
  local dir
  dir=$(realpath -m "$1")
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' \
    /proc/self/mountinfo | sort -r
}

# --- the rootfs as an overlay, in a mount namespace of the script's own ---

# Runs the calling script again in a mount namespace of its own, unless it
# (or the script that started it) runs in one already: every mount it makes
# (the overlay, /proc, /sys, /dev) is private to it and goes with its last
# process, however it ends. Call as: arm64_private_mounts "$0" "$@"
arm64_private_mounts() {
  [ "${ARM64_PRIVATE_MOUNTS:-}" = 1 ] && return 0
  command -v unshare >/dev/null || arm64_die "unshare missing (util-linux)"
  export ARM64_PRIVATE_MOUNTS=1
  exec unshare --mount --propagation private -- bash "$@"
}

# arm64_mount_root DIR: the rootfs mounted at DIR/root as an overlay whose
# writes go to DIR/upper (the cached tree is never written, so a run that
# installs packages or copies binaries in leaves it as it was, and DIR/upper
# holds exactly what the run changed), with this machine's /proc, /sys and
# /dev bound in and a tmpfs on /tmp. Only in a private mount namespace
# (arm64_private_mounts). In a user namespace (ARM64_USERNS=1) the rootfs's
# files belong to an unmapped root: reading and running them works, writing
# into its directories does not (overlayfs cannot copy them up); new
# top-level directories (DIR/root/NAME) and /tmp are writable.
arm64_mount_root() {
  local dir=$1 m
  [ "${ARM64_PRIVATE_MOUNTS:-}" = 1 ] ||
    arm64_die "arm64_mount_root: not in a private mount namespace (arm64_private_mounts)"
  [ -f "$ARM64_ROOTFS/.tunefleet-rootfs" ] ||
    arm64_die "no rootfs at $ARM64_ROOTFS: bash deploy/arm64/make-rootfs.sh"
  case "$ARM64_ROOTFS:$dir" in
    *,*) arm64_die "overlayfs cannot take paths with commas: $ARM64_ROOTFS, $dir" ;;
  esac
  mkdir -p "$dir/upper" "$dir/overlay-work" "$dir/root"
  mount -t overlay tunefleet-arm64 \
    -o "lowerdir=$ARM64_ROOTFS,upperdir=$dir/upper,workdir=$dir/overlay-work" \
    "$dir/root" ||
    arm64_die "cannot mount an overlay of $ARM64_ROOTFS at $dir/root" \
      "(overlayfs; kernel >= 5.11 inside a user namespace)"
  for m in proc sys dev; do
    mount --rbind "/$m" "$dir/root/$m" ||
      arm64_die "cannot bind /$m into $dir/root"
  done
  mount -t tmpfs -o mode=1777,nosuid,nodev tunefleet-arm64-tmp "$dir/root/tmp" ||
    arm64_die "cannot mount a tmpfs on $dir/root/tmp"
}

# arm64_unmount_root DIR: what arm64_mount_root mounted, unmounted (deepest
# first; in a user namespace the host's mounts under /proc, /sys and /dev
# are locked to their parent and go with its lazy unmount). Fails when
# something stays mounted under DIR: never delete DIR then (a bound /dev
# would be emptied through it).
arm64_unmount_root() {
  local dir=$1 m
  for m in $(arm64_mounts_under "$dir"); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  [ -z "$(arm64_mounts_under "$dir")" ]
}

# --- systemd's view of a unit, for running it where systemd does not run ---

# unit_load_env FILE and unit_argv UNIT KEY (deploy/packaging/unit-command.sh).
source "$(dirname "${BASH_SOURCE[0]}")/../packaging/unit-command.sh"
