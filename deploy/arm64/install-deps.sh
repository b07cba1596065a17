#!/usr/bin/env bash
# Installs what the aarch64 cross build and the board test need on top of
# deploy/install-deps.sh (which this runs first): mmdebstrap (the arm64
# rootfs), qemu-user-static and binfmt-support (running arm64 binaries),
# crossbuild-essential-arm64 (the cross compiler). Kept apart from
# deploy/install-deps.sh so that CI does not install them.
# Idempotent, like deploy/install-deps.sh. Needs root (or sudo).
set -euo pipefail

bash "$(dirname "$0")/../install-deps.sh"

PACKAGES=(
  mmdebstrap arch-test zstd
  qemu-user-static binfmt-support
  crossbuild-essential-arm64
  file
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "arm64/install-deps.sh: run as root or install sudo" >&2; exit 1
  fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "arm64/install-deps.sh: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "arm64/install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
