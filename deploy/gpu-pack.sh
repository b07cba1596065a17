#!/usr/bin/env bash
# Packs what a GPU machine without Debian's libraries needs to run
# tunefleet's GPU benchmark and tuning (deploy/gpu-run.sh): the binaries
# from a build tree, the shared libraries `ldd` lists except glibc's own,
# libstdc++ and libgcc_s apart (used only when the machine's are older),
# Debian's OpenCL ICD loader, and the PP-OCR models. Output: build-gpu-pack/.
#
#   deploy/gpu-pack.sh [BUILD_DIR]
#   PACK_MODELS="cls det rec" deploy/gpu-pack.sh   # also the det and rec
#     models (+15 MB); PACK_BENCH=0 leaves out the benchmarks (gpu_gemm,
#     gpu_membound, agent_efficiency, model_tuning, model_e2e), and
#     PACK_BENCH="model_e2e" (a list of their names) packs only those named
#     (with the three models and the peer: 72 MB, 38 MB as a tar.gz, which
#     fits the device tool's 64 MiB carry; gpu-run.sh model-e2e)
#   PEER_TOOL=/path/to/onnx_torch.py deploy/gpu-pack.sh   # packs the
#     PyTorch + cuDNN peer that gpu-run.sh model-e2e times beside ours
#     (MODEL onnx --shape N=D.. [--cuda-graph] [--check-ort] --json)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=build-gpu-pack
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/lib-std" "$OUT/models"
BINS=("$BUILD/cli/tunefleet"
      "$BUILD/server/tunefleet-server" "$BUILD/device_agent/tunefleet-agent")
# Whole models end to end (model_e2e, for gpu-run.sh model-e2e) is built
# with the tests; it is packed where the build has it.
case "${PACK_BENCH:-1}" in
  0) BENCHES=() ;;
  1) BENCHES=(gpu_gemm gpu_membound agent_efficiency model_tuning model_e2e) ;;
  *) read -ra BENCHES <<< "$PACK_BENCH" ;;
esac
for b in "${BENCHES[@]}"; do
  if [ -x "$BUILD/bench/$b" ]; then
    BINS+=("$BUILD/bench/$b")
  elif [ "${PACK_BENCH:-1}" != 1 ] || [ "$b" != model_e2e ]; then
    echo "PACK_BENCH: no benchmark $BUILD/bench/$b (build it first)" >&2
    exit 2
  fi
done
cp "${BINS[@]}" "$OUT/bin/"
strip "$OUT"/bin/*
for lib in $(ldd "${BINS[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    libstdc++.so.*|libgcc_s.so.*) cp -L "$lib" "$OUT/lib-std/" ;;
    *) cp -L "$lib" "$OUT/lib/" ;;
  esac
done
# The agent dlopen()s libOpenCL.so.1 (opencl/opencl_loader.cc), so
# ldd does not list it: Debian's ICD loader goes in by name, or the
# machine's own libOpenCL (a PoCL built as the library itself, say) would
# ignore the NVIDIA driver gpu-run.sh registers.
cp -L "$(ldconfig -p | awk '/libOpenCL\.so\.1 .*x86-64/ {print $NF; exit}')" "$OUT/lib/"
strip --strip-unneeded "$OUT"/lib/* "$OUT"/lib-std/* 2>/dev/null || true
MODEL=$(deploy/fetch-model.sh)
ASSETS=$(dirname "$MODEL")
for m in ${PACK_MODELS:-cls}; do
  case "$m" in
    cls) cp "$MODEL" "$OUT/models/" ;;
    det|rec) cp "$ASSETS/ch_PP-OCRv4_${m}_infer.onnx" "$OUT/models/" ;;
    *) echo "unknown model '$m' in PACK_MODELS (cls, det, rec)" >&2; exit 2 ;;
  esac
done
cp deploy/gpu-run.sh "$OUT/"
# ONNX Runtime's runner for Python's onnxruntime (gpu-run.sh model-e2e).
cp tests/support/ort_run.py "$OUT/"
if [ -n "${PEER_TOOL:-}" ]; then
  [ -f "$PEER_TOOL" ] || { echo "PEER_TOOL=$PEER_TOOL: no such file" >&2; exit 2; }
  cp "$PEER_TOOL" "$OUT/peer.py"
  # The float64 check of gpu-run.sh model-deviation, which runs the peer.
  cp tests/support/fp64_deviation.py "$OUT/"
fi
du -sh "$OUT"
