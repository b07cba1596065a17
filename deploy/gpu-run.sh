#!/usr/bin/env bash
# Runs on the GPU machine from a deploy/gpu-pack.sh pack: registers
# NVIDIA's OpenCL driver with the ICD loader, then runs the benchmark and
# the model tuning, writing results to $OUT (or ./gpu-out).
#
#   build-gpu-pack/gpu-run.sh [gemm|model|info|efficiency|all] [extra args...]
#   build-gpu-pack/gpu-run.sh fleet [SHAPE] [TRIALS]
#     a tunefleet-server and a tunefleet-agent as separate processes on
#     loopback with tokens, as on a board; one job tuned through them
#     (AGENT_FLAGS: more tunefleet-agent flags; FLEET_TAG: suffix of the
#     result files, for several runs in one call)
#   build-gpu-pack/gpu-run.sh probe SHAPE CONFIG_FILE [EXTRA_BUILD_OPTIONS]
#     measures each gemm_gpu config of CONFIG_FILE (one KNOB=V,... a line)
#     at SHAPE and prints its speed, registers, spills and PTX load counts
#     (PROBE_CLI=path: another tunefleet build, e.g. of an earlier kernel)
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
RESULTS=${OUT:-$PWD/gpu-out}
mkdir -p "$RESULTS"
# NVIDIA's driver is installed but not registered with the ICD loader;
# elsewhere (a PoCL test run) the machine's own registrations stay.
for d in /usr/lib /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  if [ -e "$d/libnvidia-opencl.so.1" ]; then
    mkdir -p /tmp/icd
    echo "$d/libnvidia-opencl.so.1" > /tmp/icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/icd
  fi
done
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
if [ "$what" = efficiency ] || [ "$what" = all ]; then
  "$BIN/agent_efficiency" "$@" | tee "$RESULTS/agent_efficiency.txt"
fi
if [ "$what" = fleet ]; then
  shape=${1:-M=2048,N=2048,K=2048} trials=${2:-60} port=${FLEET_PORT:-7878}
  dir=$(mktemp -d)
  "$BIN/tunefleet" token add --role agent --tokens "$dir/tokens" > "$dir/agent.token"
  "$BIN/tunefleet" token add --role tuner --tokens "$dir/tokens" > "$dir/tuner.token"
  "$BIN/tunefleet-server" --listen "127.0.0.1:$port" --db "$RESULTS/fleet${FLEET_TAG:-}.db" \
    --tokens "$dir/tokens" 2> "$RESULTS/fleet-server${FLEET_TAG:-}.log" &
  server=$!
  # shellcheck disable=SC2086  # AGENT_FLAGS: extra agent flags, split
  "$BIN/tunefleet-agent" --server "127.0.0.1:$port" ${AGENT_FLAGS:-} \
    --token-file "$dir/agent.token" 2> "$RESULTS/fleet-agent${FLEET_TAG:-}.log" &
  agent=$!
  client=(--server "127.0.0.1:$port" --token-file "$dir/tuner.token")
  for _ in $(seq 100); do  # until the agent has said Hello
    [ "$("$BIN/tunefleet" devices "${client[@]}" 2>/dev/null | wc -l)" -gt 1 ] && break
    sleep 0.2
  done
  "$BIN/tunefleet" devices "${client[@]}" | tee "$RESULTS/fleet${FLEET_TAG:-}.txt"
  "$BIN/tunefleet" tune "${client[@]}" --template gemm_gpu --shape "$shape" \
    --trials "$trials" 2> "$RESULTS/fleet-tune${FLEET_TAG:-}.log" | tee -a "$RESULTS/fleet${FLEET_TAG:-}.txt"
  "$BIN/tunefleet" query "${client[@]}" | tee -a "$RESULTS/fleet${FLEET_TAG:-}.txt"
  kill "$agent" "$server"
  wait "$agent" "$server" 2>/dev/null
  rm -rf "$dir"
fi
if [ "$what" = probe ]; then
  shape=$1 configs=$2 extra=${3:-}
  while read -r config; do
    [ -z "$config" ] && continue
    echo "== $config $extra"
    "${PROBE_CLI:-$BIN/tunefleet}" measure --template gemm_gpu --shape "$shape" \
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
