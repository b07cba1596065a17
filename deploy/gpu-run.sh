#!/usr/bin/env bash
# Runs on the GPU machine from a deploy/gpu-pack.sh pack: registers
# NVIDIA's OpenCL driver with the ICD loader, then runs the benchmark and
# the model tuning, writing results to $OUT (or ./gpu-out).
#
#   build-gpu-pack/gpu-run.sh [gemm|model|info|all] [extra args...]
#   build-gpu-pack/gpu-run.sh probe SHAPE CONFIG_FILE [EXTRA_BUILD_OPTIONS]
#     measures each gemm_gpu config of CONFIG_FILE (one KNOB=V,... a line)
#     at SHAPE and prints its speed, registers, spills and PTX load counts
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
RESULTS=${OUT:-$PWD/gpu-out}
mkdir -p "$RESULTS" /tmp/icd
echo /usr/lib/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -e "$d/libnvidia-opencl.so.1" ] && echo "$d/libnvidia-opencl.so.1" > /tmp/icd/nvidia.icd
done
export OCL_ICD_VENDORS=/tmp/icd
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The machine's libstdc++ when it is new enough, else the packed one.
if ! "$PACK/bin/tunefleet" --help >/dev/null 2>&1; then
  export LD_LIBRARY_PATH="$PACK/lib-std:$LD_LIBRARY_PATH"
fi
BIN=$PACK/bin
what=${1:-all}
shift || true
if [ "$what" = info ] || [ "$what" = all ]; then
  "$BIN/tunefleet-agent" --info | tee "$RESULTS/device.json"
fi
if [ "$what" = gemm ] || [ "$what" = all ]; then
  "$BIN/gpu_gemm" --db "$RESULTS/gpu_gemm.db" "$@" 2> "$RESULTS/gpu_gemm.log" |
    tee "$RESULTS/gpu_gemm.txt"
fi
if [ "$what" = probe ]; then
  shape=$1 configs=$2 extra=${3:-}
  while read -r config; do
    [ -z "$config" ] && continue
    echo "== $config $extra"
    "$BIN/tunefleet" measure --template gemm_gpu --shape "$shape" \
      --config "$config" --inspect ${extra:+--extra-options "$extra"} |
      grep -E "GFLOP|WRONG|ERROR|ptx:|registers|spill|build:" |
      grep -v "^ptxas info    : Compiling"
  done < "$configs" | tee -a "$RESULTS/probe.txt"
fi
if [ "$what" = model ] || [ "$what" = all ]; then
  "$BIN/tunefleet" tune --onnx "$PACK/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
    --input-shape x=1,3,48,192 --trials-per-task "${TRIALS_PER_TASK:-40}" \
    --db "$RESULTS/cls.db" --json > "$RESULTS/cls.json" 2> "$RESULTS/cls.log"
  tail -5 "$RESULTS/cls.log"
fi
