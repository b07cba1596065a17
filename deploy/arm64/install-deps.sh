#!/usr/bin/env bash
# Installs what the aarch64 cross build and the board test need on top of
# deploy/install-deps.sh (which this runs first): mmdebstrap (the arm64
# rootfs), qemu-user-static and binfmt-support (running arm64 binaries),
# crossbuild-essential-arm64 (the cross compiler), ccache (the cross build
# compiles through it: a machine CI uses again recompiles what changed
# only). Kept apart from deploy/install-deps.sh: CI installs them only where
# it runs the board test (deploy/arm64/ci-board-test.sh).
# Idempotent: deploy/install-deps.sh with these packages added. Needs root
# (or sudo).
set -euo pipefail

exec bash "$(dirname "$0")/../install-deps.sh" \
  mmdebstrap arch-test zstd \
  qemu-user-static binfmt-support \
  crossbuild-essential-arm64 ccache \
  file
