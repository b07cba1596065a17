#!/usr/bin/env bash
# Makes the arm64 Debian 12 root filesystem that is both the sysroot of the
# aarch64 cross build and the stand-in board the board test runs the agent
# in (under qemu-user): the build dependencies of tunefleet-agent and the
# CLI, the OpenCL ICD loader and PoCL.
#
#   bash deploy/arm64/make-rootfs.sh     # prints the rootfs path on stdout
#
# mmdebstrap's output is cached as .cache/arm64/rootfs-<key>.tar.zst, keyed
# by a hash of the package list, suite, mirrors and variant; the tree is
# unpacked to .cache/arm64/rootfs (ARM64_ROOTFS) and fixed up for cross
# building:
#  - absolute symlinks under usr/ become relative (else libz.so and friends
#    dangle when seen from the host, and FindZLIB picks libz.a);
#  - programs the sysroot's CMake exports name (grpc_cpp_plugin and the
#    other gRPC plugins, the xgboost CLI) but that are not installed there
#    point at the host's (else find_package(gRPC/xgboost) fails).
# Needs root, mmdebstrap, qemu-user-static and binfmt-support
# (deploy/arm64/install-deps.sh) and Debian's mirrors.
set -euo pipefail
source "$(dirname "$0")/common.sh"
arm64_need_root make-rootfs.sh
command -v mmdebstrap >/dev/null ||
  arm64_die "mmdebstrap missing: bash deploy/arm64/install-deps.sh"
arm64_ensure_binfmt

key=$(arm64_rootfs_key)
tarball=$ARM64_CACHE/rootfs-$key.tar.zst
stamp=$ARM64_ROOTFS/.tunefleet-rootfs
# The stamp names the tarball and the version of the fix-ups below: a tree
# unpacked or fixed by another version is unpacked again.
stamp_text="$key fixups-2"
mkdir -p "$ARM64_CACHE"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ]; then
  arm64_log "rootfs $ARM64_ROOTFS is current (key $key)"
else
  if [ ! -f "$tarball" ]; then
    arm64_log "mmdebstrap --arch=arm64 $ARM64_SUITE -> $tarball (3-5 minutes)"
    t0=$(arm64_now)
    rm -f "$tarball.part.tar.zst"
    mmdebstrap --arch=arm64 --variant="$ARM64_VARIANT" \
      --include="$(IFS=,; echo "${ARM64_PACKAGES[*]}")" \
      --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      "$ARM64_SUITE" "$tarball.part.tar.zst" "${ARM64_MIRRORS[@]}" ||
      { rm -f "$tarball.part.tar.zst"; arm64_die "mmdebstrap failed"; }
    mv "$tarball.part.tar.zst" "$tarball"
    arm64_log "timing: mmdebstrap $(arm64_elapsed "$t0") s," \
      "$(du -h "$tarball" | cut -f1) tarball"
  else
    arm64_log "reusing cached $tarball"
  fi
  # Never delete through a live bind mount (it would empty the host's /dev).
  if [ -n "$(arm64_mounts_under "$ARM64_ROOTFS")" ]; then
    arm64_die "still mounted under $ARM64_ROOTFS:" \
      "$(arm64_mounts_under "$ARM64_ROOTFS" | tr '\n' ' ')(unmount first)"
  fi
  t0=$(arm64_now)
  rm -rf "$ARM64_ROOTFS"
  mkdir -p "$ARM64_ROOTFS"
  tar --zstd -xpf "$tarball" --numeric-owner -C "$ARM64_ROOTFS"
  arm64_log "timing: unpack $(arm64_elapsed "$t0") s," \
    "$(du -sh "$ARM64_ROOTFS" | cut -f1) rootfs"
fi

# Fix-ups (idempotent, cheap): absolute symlinks under usr/ and
# etc/alternatives/ made relative, textually (-s: a link's target is never
# resolved on the host).
host_tools_list=$ARM64_ROOTFS/.tunefleet-host-tools
old_host_tools=$(cat "$host_tools_list" 2>/dev/null || true)
find "$ARM64_ROOTFS/usr" "$ARM64_ROOTFS/etc/alternatives" -type l -lname '/*' \
    -print0 |
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in
      /usr/bin/*) grep -qxF "$link" <<<"$old_host_tools" && continue ;;
    esac
    ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" \
                 "$ARM64_ROOTFS$target")" "$link"
  done

# Host programs for the sysroot's CMake exports. These links are absolute
# on purpose (host paths; inside the chroot they mean nothing and are never
# run there); .tunefleet-host-tools lists them.
: > "$host_tools_list"
grep -ho '${_IMPORT_PREFIX}/bin/[A-Za-z0-9_.+-]*' \
    "$ARM64_ROOTFS"/usr/lib/aarch64-linux-gnu/cmake/*/*.cmake 2>/dev/null |
  sed 's|.*/bin/||' | sort -u |
  while read -r tool; do
    link=$ARM64_ROOTFS/usr/bin/$tool
    if [ -L "$link" ] && grep -qxF "$link" <<<"$old_host_tools"; then
      echo "$link" >> "$host_tools_list"
      continue
    fi
    if [ -e "$link" ] || [ -L "$link" ]; then
      continue  # the arm64 package itself is installed
    fi
    if [ -x "/usr/bin/$tool" ]; then
      ln -s "/usr/bin/$tool" "$link"
    else
      # Not on the host either: a placeholder, so that the export loads.
      printf '#!/bin/sh\necho "%s: placeholder for a host tool" >&2\nexit 1\n' \
        "$tool" > "$link"
      chmod +x "$link"
    fi
    echo "$link" >> "$host_tools_list"
  done

echo "$stamp_text" > "$stamp"
mkdir -p "$ARM64_POCL_CACHE"
echo "$ARM64_ROOTFS"
