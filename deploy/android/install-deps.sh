#!/usr/bin/env bash
# Installs what the Android build and run recipe need on top of
# deploy/install-deps.sh (which this runs first): dpkg-dev (apt-get source
# unpacks with dpkg-source), unicode-data and python3-six (re2's Unicode
# tables, which Debian's re2 source leaves to be generated), libc++ for
# clang-14 (build-agent.sh --host-check checks the agent's sources against
# the NDK's C++ library) and adb. The Android NDK is not in Debian's
# archive: install it apart (deploy/android/README.md).
# Idempotent; needs root (or sudo).
set -euo pipefail

exec bash "$(dirname "$0")/../install-deps.sh" \
  dpkg-dev unicode-data python3-six perl make libc++-14-dev libc++abi-14-dev adb
