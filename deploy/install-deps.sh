#!/usr/bin/env bash
# Installs tunefleet's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped, and apt-get update runs
# only when something is missing. Needs root (or sudo). OPTIONAL packages
# speed the build up but are not needed: where they cannot be installed the
# script says so and succeeds.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libxgboost-dev xgboost
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libsqlite3-dev sqlite3 zlib1g-dev
  libabsl-dev libgtest-dev libgmock-dev
  libclblast-dev clblast-utils
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
  libspdlog-dev libfmt-dev
  libonnx-dev libmuparser-dev
  libbenchmark-dev
  libssl-dev openssl
  libjemalloc-dev
  clang-14 libfuzzer-14-dev
  python3-grpcio python3-grpc-tools
  libcpp-httplib-dev libjs-chart.js prometheus-cpp-dev
  python3-prometheus-client chromium chromium-driver fonts-dejavu-core
)
# Extra packages named on the command line join the list
# (deploy/arm64/install-deps.sh adds the cross build's).
PACKAGES+=("$@")
# ccache: deploy/build.sh, deploy/check-agent-only.sh and the tests' CMake
# builds compile through it (deploy/ccache.sh; docs/BUILDING.md, "Time").
OPTIONAL=(ccache)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps.sh: run as root or install sudo" >&2; exit 1
  fi
fi

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
missing=() optional_missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${OPTIONAL[@]}"; do installed "$p" || optional_missing+=("$p"); done

if [ ${#missing[@]} -eq 0 ] && [ ${#optional_missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#PACKAGES[@]} packages present"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps.sh: installing ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ${#optional_missing[@]} -ne 0 ]; then
  echo "install-deps.sh: installing the optional ${optional_missing[*]}"
  if ! { [ ${#missing[@]} -ne 0 ] || $SUDO apt-get update -q; } ||
     ! $SUDO apt-get install -y -q --no-install-recommends "${optional_missing[@]}"; then
    echo "install-deps.sh: WARNING: could not install ${optional_missing[*]};" \
      "the build works without (only slower)" >&2
  fi
fi
