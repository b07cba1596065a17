#!/usr/bin/env bash
# Installs tunefleet's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped, and apt-get update runs
# only when something is missing. Needs root (or sudo).
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

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps.sh: run as root or install sudo" >&2; exit 1
  fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
