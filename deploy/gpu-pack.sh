#!/usr/bin/env bash
# Packs what a GPU machine without Debian's libraries needs to run
# tunefleet's GPU benchmark and tuning (deploy/gpu-run.sh): the binaries
# from a build tree, the shared libraries `ldd` lists except glibc's own,
# libstdc++ and libgcc_s apart (used only when the machine's are older),
# Debian's OpenCL ICD loader, and the PP-OCR models. Output: build-gpu-pack/.
#
#   deploy/gpu-pack.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=build-gpu-pack
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/lib-std" "$OUT/models"
BINS=("$BUILD/bench/gpu_gemm" "$BUILD/bench/agent_efficiency" "$BUILD/bench/model_tuning"
      "$BUILD/cli/tunefleet"
      "$BUILD/server/tunefleet-server" "$BUILD/device_agent/tunefleet-agent")
cp "${BINS[@]}" "$OUT/bin/"
strip "$OUT"/bin/*
for lib in $(ldd "${BINS[@]}" | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    libstdc++.so.*|libgcc_s.so.*) cp -L "$lib" "$OUT/lib-std/" ;;
    *) cp -L "$lib" "$OUT/lib/" ;;
  esac
done
strip --strip-unneeded "$OUT"/lib/* "$OUT"/lib-std/* 2>/dev/null || true
MODEL=$(deploy/fetch-model.sh)
# The classifier, and the det and rec models beside it.
cp "$MODEL" "$(dirname "$MODEL")"/ch_PP-OCRv4_*_infer.onnx "$OUT/models/"
cp deploy/gpu-run.sh "$OUT/"
du -sh "$OUT"
