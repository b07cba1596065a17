#!/usr/bin/env bash
# Quick start, the main job: installs the dependencies (Debian 12 packages),
# builds tunefleet, tunes a 512x512x512 SGEMM on this machine's OpenCL device
# with the embedded server and agent, then queries the best record and emits
# a tuned kernel library into ./tuned-gemm.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
TF=./build/cli/tunefleet
DB=${DB:-tunefleet.db}
TRIALS=${TRIALS:-100}

echo "== tunefleet tune --op gemm --shape M=512,N=512,K=512 --trials $TRIALS"
$TF tune --op gemm --shape M=512,N=512,K=512 --trials "$TRIALS" --db "$DB"
echo "== tunefleet query --db $DB"
$TF query --db "$DB"
echo "== tunefleet emit --db $DB --out tuned-gemm"
$TF emit --db "$DB" --out tuned-gemm
