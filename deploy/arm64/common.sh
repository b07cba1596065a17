# Shared by deploy/arm64/*.sh (sourced, not run): paths, the rootfs's
# package list and cache key, binfmt_misc for qemu-aarch64, timings.

TUNEFLEET_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Everything made here lives under the git-ignored .cache/ of the checkout.
ARM64_CACHE=${ARM64_CACHE:-$TUNEFLEET_ROOT/.cache/arm64}
# The arm64 root filesystem: the sysroot of the cross build and the chroot
# the board test runs the agent in.
ARM64_ROOTFS=${ARM64_ROOTFS:-$ARM64_CACHE/rootfs}
ARM64_BUILD_DIR=${ARM64_BUILD_DIR:-$TUNEFLEET_ROOT/build-arm64}
# PoCL's kernel cache, kept between runs (bound into the chroot).
ARM64_POCL_CACHE=${ARM64_POCL_CACHE:-$ARM64_CACHE/pocl-kcache}

ARM64_SUITE=bookworm
ARM64_MIRRORS=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)
# What the cross build links against (agent and CLI) and what the agent
# needs to run (the ICD loader and PoCL). Changing the list changes the
# cache key, so a new rootfs is made.
ARM64_PACKAGES=(
  libc6-dev libstdc++-12-dev
  libgrpc++-dev libprotobuf-dev libabsl-dev libssl-dev zlib1g-dev
  ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd clinfo
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libmuparser-dev
  libxgboost-dev libsqlite3-dev libonnx-dev
)
ARM64_VARIANT=apt

arm64_log() { echo "[arm64 $(date +%H:%M:%S)] $*" >&2; }
arm64_die() { echo "[arm64] error: $*" >&2; exit 1; }

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
