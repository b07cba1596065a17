#!/usr/bin/env bash
# Runs on the GPU machine from a deploy/gpu-pack.sh pack: registers
# NVIDIA's OpenCL driver with the ICD loader, then runs the benchmark and
# the model tuning, writing results to $OUT (or ./gpu-out).
#
#   build-gpu-pack/gpu-run.sh [gemm|model|model-bench|model-e2e|info|efficiency|all] [extra args...]
#     (gemm: cuBLAS's column where libcublas and libcudart are found, under
#     /usr/local or /opt (CUDA's lib64, PyTorch's nvidia/cublas/lib);
#     GEMM_TAG: suffix of the result files)
#   build-gpu-pack/gpu-run.sh membound [extra args...]
#     bench/gpu_membound: the memory-bound templates against the device's
#     copy bandwidth (membound.txt)
#   EMBEDDED_AGENT_FLAGS="--max-in-flight 8 --prefetch-threads 8 --binary-cache"
#     more flags for the agent that gemm and membound start embedded (a
#     wrapper named by TUNEFLEET_AGENT); "--binary-cache" alone there keeps
#     built programs across the run's jobs (in a fresh folder) instead of
#     the embedded default's --no-binary-cache
#     (model: MODELS="cls det rec" picks the PP-OCR models, TRIALS_PER_TASK the budget)
#   build-gpu-pack/gpu-run.sh model-e2e
#     whole models end to end (bench/model_e2e and `tunefleet run`): for
#     each of MODELS (default "cls det rec"), the records of
#     $OUT/<model>.db when a `model` run left them, else tuned now
#     (TRIALS_PER_TASK, default 3); then the naive and the tuned plan run
#     with the model runtime (E2E_RUNS measured runs, default 20) beside
#     ONNX Runtime's CPU latency on the same input (Python's onnxruntime
#     through the packed ort_run.py) and their outputs' deviation
#     (model_e2e.txt, e2e-<model>.json, run-<model>.json); `tunefleet run`
#     with --record off and auto (run-<model>-record-<mode>.json); where
#     the pack has the peer (gpu-pack.sh PEER_TOOL=...), PyTorch + cuDNN
#     eager and with CUDA graphs on the same model and shape, checked
#     against ONNX Runtime (peer-<model>-<eager|graph>.json), in the same
#     call; a summary table last (e2e_summary.txt)
#   build-gpu-pack/gpu-run.sh model-deviation
#     for each of MODELS with records in $OUT/<model>.db: bench/model_e2e
#     --attribute-deviation, one plan per tuned workload (the others
#     naive) and its outputs' deviation from ONNX Runtime: which tuned
#     layer moves the outputs; where the pack has the peer, the tuned,
#     naive and ONNX Runtime outputs against a float64 run of the model
#     (fp64_deviation.py): which fp32 result is nearest the exact one
#     (deviation-<model>.txt)
#   build-gpu-pack/gpu-run.sh schedules
#     one job per template of the mobile-GPU schedules (image knobs,
#     CLBlast library templates), every trial verified (schedules.db)
#   build-gpu-pack/gpu-run.sh fleet [SHAPE] [TRIALS]
#     a tunefleet-server and a tunefleet-agent as separate processes on
#     loopback with tokens, as on a board; one job tuned through them
#     (AGENT_FLAGS: more tunefleet-agent flags; FLEET_TAG: suffix of the
#     result files, for several runs in one call)
#   build-gpu-pack/gpu-run.sh probe SHAPE CONFIG_FILE [EXTRA_BUILD_OPTIONS]
#     measures each gemm_gpu config of CONFIG_FILE (one KNOB=V,... a line)
#     at SHAPE and prints its speed, registers, spills and PTX load counts
#     (PROBE_CLI=path: another tunefleet build, e.g. of an earlier kernel;
#     PROBE_TEMPLATE and PROBE_OP: another template than gemm_gpu and its
#     op, e.g. depthwise_direct and depthwise_conv2d)
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
# cuBLAS and the CUDA runtime for gpu_gemm's cuBLAS column (dlopen'ed by
# bench/cublas_sgemm.cc): the first found, CUDA's own before PyTorch's.
find_cuda_lib() {
  find /usr/local/cuda*/ /usr/local/cuda/lib64 /opt -name "$1" 2>/dev/null | sort | head -1
}
if [ -z "${TUNEFLEET_CUBLAS:-}" ]; then
  TUNEFLEET_CUBLAS=$(find_cuda_lib 'libcublas.so.[0-9]*')
  TUNEFLEET_CUDART=$(find_cuda_lib 'libcudart.so.[0-9]*')
  export TUNEFLEET_CUBLAS TUNEFLEET_CUDART
fi
if [ -n "${EMBEDDED_AGENT_FLAGS:-}" ]; then
  TUNEFLEET_AGENT_BIN=$BIN/tunefleet-agent
  TUNEFLEET_AGENT_CACHE=$(mktemp -d)
  export TUNEFLEET_AGENT_BIN TUNEFLEET_AGENT_CACHE EMBEDDED_AGENT_FLAGS
  cat > /tmp/tunefleet-agent-wrap.sh <<'WRAP'
#!/usr/bin/env bash
# The embedded agent's flags, plus $EMBEDDED_AGENT_FLAGS (gpu-run.sh).
args=() flags=()
for f in $EMBEDDED_AGENT_FLAGS; do
  flags+=("$f")
  [ "$f" = --binary-cache ] && flags+=("$TUNEFLEET_AGENT_CACHE")
done
for a in "$@"; do
  [ "$a" = --no-binary-cache ] && [[ " ${flags[*]} " == *" --binary-cache "* ]] && continue
  args+=("$a")
done
exec "$TUNEFLEET_AGENT_BIN" "${args[@]}" "${flags[@]}"
WRAP
  chmod +x /tmp/tunefleet-agent-wrap.sh
  export TUNEFLEET_AGENT=/tmp/tunefleet-agent-wrap.sh
fi
what=${1:-all}
shift || true
if [ "$what" = info ] || [ "$what" = all ]; then
  "$BIN/tunefleet-agent" --info | tee "$RESULTS/device.json"
fi
if [ "$what" = gemm ] || [ "$what" = all ]; then
  echo "cuBLAS: ${TUNEFLEET_CUBLAS:-none} (${TUNEFLEET_CUDART:-no cudart}); agent flags: ${EMBEDDED_AGENT_FLAGS:-none}" |
    tee "$RESULTS/gpu_gemm${GEMM_TAG:-}.txt"
  "$BIN/gpu_gemm" --db "$RESULTS/gpu_gemm${GEMM_TAG:-}.db" "$@" 2> "$RESULTS/gpu_gemm${GEMM_TAG:-}.log" |
    tee -a "$RESULTS/gpu_gemm${GEMM_TAG:-}.txt"
fi
if [ "$what" = membound ]; then
  "$BIN/gpu_membound" "$@" 2> "$RESULTS/membound.log" | tee "$RESULTS/membound.txt"
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
    "${PROBE_CLI:-$BIN/tunefleet}" measure --template "${PROBE_TEMPLATE:-gemm_gpu}" ${PROBE_OP:+--op "$PROBE_OP"} --shape "$shape" \
      --config "$config" --inspect ${extra:+--extra-options "$extra"} |
      grep -E "GFLOP|GB/s|WRONG|ERROR|ptx:|registers|spill|build:" |
      grep -v "^ptxas info    : Compiling"
  done < "$configs" | tee -a "$RESULTS/probe.txt"
fi
# Sets file and shape for a packed PP-OCR model of MODELS (cls, det, rec).
model_file_shape() {
  case "$1" in
    cls) file=ch_ppocr_mobile_v2.0_cls_infer.onnx shape=x=1,3,48,192 ;;
    det) file=ch_PP-OCRv4_det_infer.onnx shape=x=1,3,640,640 ;;
    rec) file=ch_PP-OCRv4_rec_infer.onnx shape=x=1,3,48,320 ;;
    *) echo "unknown model '$1' in MODELS (cls, det, rec)" >&2; exit 2 ;;
  esac
}
if [ "$what" = model ] || [ "$what" = all ]; then
  # MODELS: which of the packed PP-OCR models (cls det rec; default cls);
  # MODEL_CLI: another tunefleet build (e.g. one without this build's
  # candidates); MODEL_FLAGS: more `tune` flags (--no-library); MODEL_TAG:
  # suffix of the result files, for several runs in one call.
  for model in ${MODELS:-cls}; do
    model_file_shape "$model"
    # shellcheck disable=SC2086  # MODEL_FLAGS: extra flags, split
    "${MODEL_CLI:-$BIN/tunefleet}" tune --onnx "$PACK/models/$file" \
      --input-shape "$shape" --trials-per-task "${TRIALS_PER_TASK:-40}" ${MODEL_FLAGS:-} \
      --db "$RESULTS/$model${MODEL_TAG:-}.db" --json > "$RESULTS/$model${MODEL_TAG:-}.json" \
      2> "$RESULTS/$model${MODEL_TAG:-}.log"
    tail -5 "$RESULTS/$model${MODEL_TAG:-}.log"
  done
fi
# A Python with PyTorch for the peer (the machine's python3, else a
# virtual environment or conda under /opt, /usr/local or /root).
find_peer_python() {
  local p
  for p in python3 /opt/*/bin/python3 /opt/*/*/bin/python3 /usr/local/bin/python3 \
           /root/*/bin/python3 /root/.venv*/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch, onnx" 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}
# One line per model: ours (tuned plan, plain and recorded runs; "on-dev":
# inputs and outputs in device buffers, no host copies, as the peer keeps
# its tensors on the GPU; the median of three processes) beside the peer's eager and CUDA-graph medians,
# and each one's deviation from ONNX Runtime (max|ours - ort| / max|ort|).
e2e_summary() {
  python3 - "$RESULTS" ${MODELS:-cls det rec} <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
f = lambda v: "-" if v is None else "%.4g" % v
print("%-5s %9s %9s %9s %9s %9s %10s %11s %11s %10s %9s %13s" % (
    "model", "off ms", "auto ms", "on-dev ms", "est ms", "auto/est", "ours rel",
    "torch eager", "torch graph", "torch rel", "views v/c", "views off dev"))
for m in models:
    off, auto = load("run-%s-record-off.json" % m), load("run-%s-record-auto.json" % m)
    e2e = (load("e2e-%s.json" % m).get("models") or [{}])[0]
    pe, pg = load("peer-%s-eager.json" % m), load("peer-%s-graph.json" % m)
    med = lambda j: (j.get("latency_ms") or {}).get("median")
    est = auto.get("estimated_ms")
    ratio = med(auto) / est if med(auto) and est else None
    diffs = (pg.get("ort") or {}).get("diffs") or {}
    rels = [d.get("max_rel") for d in diffs.values() if d.get("max_rel") is not None]
    # On the device: the median of the three `tunefleet run` processes'
    # medians (the figure moves from process to process on some machines).
    runs = [(j.get("device_buffers_latency_ms") or {}).get("median")
            for j in (load("run-%s.json" % m), off, auto)]
    runs = sorted(v for v in runs if v is not None)
    on_dev = runs[len(runs) // 2] if runs else None
    # Tensors read through images: viewed in place / copied in per run,
    # and the on-device median with views off (every one copied).
    nv = load("run-%s-views-off.json" % m)
    views = "%s/%s" % (auto.get("image_views", "-"), auto.get("image_fills", "-"))
    print("%-5s %9s %9s %9s %9s %9s %10s %11s %11s %10s %9s %13s" % (
        m, f(med(off)), f(med(auto)), f(on_dev), f(est), f(ratio),
        f(e2e.get("max_relative_deviation")), f(med(pe)), f(med(pg)),
        f(max(rels) if rels else None), views,
        f((nv.get("device_buffers_latency_ms") or {}).get("median"))))
PY
}
if [ "$what" = model-e2e ]; then
  PEER_PYTHON=$(find_peer_python)
  echo "peer python: ${PEER_PYTHON:-none found}" >&2
  # ONNX Runtime for the reference: the machine's Python package.
  if [ -z "${TUNEFLEET_ORT_COMMAND:-}" ] && python3 -c "import onnxruntime" 2>/dev/null; then
    export TUNEFLEET_ORT_COMMAND="python3 $PACK/ort_run.py"
  fi
  for model in ${MODELS:-cls det rec}; do
    model_file_shape "$model"
    db="$RESULTS/$model${MODEL_TAG:-}.db"
    if [ ! -e "$db" ]; then
      "$BIN/tunefleet" tune --onnx "$PACK/models/$file" --input-shape "$shape" \
        --trials-per-task "${TRIALS_PER_TASK:-3}" --db "$db" --json \
        > "$RESULTS/$model${MODEL_TAG:-}.json" 2> "$RESULTS/$model${MODEL_TAG:-}.log"
      tail -3 "$RESULTS/$model${MODEL_TAG:-}.log"
    fi
    "$BIN/model_e2e" --db "$db" --model "$model=$PACK/models/$file@$shape" \
      --runs "${E2E_RUNS:-20}" --ort-runs "${E2E_RUNS:-20}" \
      2> "$RESULTS/e2e-$model.log" | tee -a "$RESULTS/model_e2e.txt"
    "$BIN/model_e2e" --db "$db" --model "$model=$PACK/models/$file@$shape" \
      --runs "${E2E_RUNS:-20}" --ort-runs "${E2E_RUNS:-20}" --json \
      > "$RESULTS/e2e-$model.json" 2>> "$RESULTS/e2e-$model.log"
    "$BIN/tunefleet" run --onnx "$PACK/models/$file" --input-shape "$shape" \
      --db "$db" --runs "${E2E_RUNS:-20}" --json \
      > "$RESULTS/run-$model.json" 2>> "$RESULTS/e2e-$model.log"
    "$BIN/tunefleet" run --onnx "$PACK/models/$file" --input-shape "$shape" \
      --db "$db" --runs "${E2E_RUNS:-20}" | tee -a "$RESULTS/model_e2e.txt"
    for mode in off auto; do
      "$BIN/tunefleet" run --onnx "$PACK/models/$file" --input-shape "$shape" \
        --db "$db" --runs "${E2E_RUNS:-20}" --record "$mode" --json \
        > "$RESULTS/run-$model-record-$mode.json" 2>> "$RESULTS/e2e-$model.log"
    done
    # The same plan with every tensor read through an image copied in
    # before its layer, against views of the tensors' own memory.
    "$BIN/tunefleet" run --onnx "$PACK/models/$file" --input-shape "$shape" \
      --db "$db" --runs "${E2E_RUNS:-20}" --image-views off --json \
      > "$RESULTS/run-$model-views-off.json" 2>> "$RESULTS/e2e-$model.log"
    "$BIN/tunefleet" run --onnx "$PACK/models/$file" --input-shape "$shape" \
      --db "$db" --runs 1 --describe > "$RESULTS/describe-$model.txt" \
      2>> "$RESULTS/e2e-$model.log"
    if [ -f "$PACK/peer.py" ] && [ -n "$PEER_PYTHON" ]; then
      "$PEER_PYTHON" "$PACK/peer.py" "$PACK/models/$file" --shape "$shape" \
        --iters "${E2E_RUNS:-50}" --check-ort --json \
        > "$RESULTS/peer-$model-eager.json" 2>> "$RESULTS/e2e-$model.log"
      "$PEER_PYTHON" "$PACK/peer.py" "$PACK/models/$file" --shape "$shape" \
        --iters "${E2E_RUNS:-50}" --cuda-graph --check-ort --json \
        > "$RESULTS/peer-$model-graph.json" 2>> "$RESULTS/e2e-$model.log"
    fi
  done
  e2e_summary | tee "$RESULTS/e2e_summary.txt"
fi
if [ "$what" = model-deviation ]; then
  if [ -z "${TUNEFLEET_ORT_COMMAND:-}" ] && python3 -c "import onnxruntime" 2>/dev/null; then
    export TUNEFLEET_ORT_COMMAND="python3 $PACK/ort_run.py"
  fi
  for model in ${MODELS:-cls det rec}; do
    model_file_shape "$model"
    "$BIN/model_e2e" --db "$RESULTS/$model${MODEL_TAG:-}.db" \
      --model "$model=$PACK/models/$file@$shape" --runs 1 --ort-runs 1 \
      --record off --attribute-deviation --save-dir "$RESULTS/arrays" \
      2> "$RESULTS/deviation-$model.log" | tee "$RESULTS/deviation-$model.txt"
    PEER_PYTHON=${PEER_PYTHON:-$(find_peer_python)}
    if [ -f "$PACK/fp64_deviation.py" ] && [ -n "$PEER_PYTHON" ]; then
      "$PEER_PYTHON" "$PACK/fp64_deviation.py" --model "$model=$PACK/models/$file" \
        --dir "$RESULTS/arrays" 2>> "$RESULTS/deviation-$model.log" \
        | tee -a "$RESULTS/deviation-$model.txt"
    fi
    rm -rf "$RESULTS/arrays"
  done
fi
if [ "$what" = model-bench ]; then
  # bench/model_tuning on this device: the cls model's budget spread
  # uniformly and by the task scheduler (TRIALS_PER_TASK, default 8).
  "$BIN/model_tuning" --onnx "$PACK/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
    --input-shape x=1,3,48,192 \
    --trials-per-task "${TRIALS_PER_TASK:-8}" --only real \
    > "$RESULTS/model_tuning.txt" 2> "$RESULTS/model_tuning.log"
  cat "$RESULTS/model_tuning.txt"
fi
if [ "$what" = schedules ]; then
  # The mobile-GPU schedules (image knobs, library templates) verified on
  # this device: one job per template on a shape of a MobileNet-style
  # model, every trial checked against the reference (schedules.db).
  while read -r tmpl op shape; do
    "$BIN/tunefleet" tune --template "$tmpl" --op "$op" --shape "$shape" \
      --trials "${SCHEDULE_TRIALS:-40}" --db "$RESULTS/schedules.db" --json --quiet \
      > "$RESULTS/schedule-$tmpl.json" 2>> "$RESULTS/schedules.log"
    echo "$tmpl $op $shape: exit $?"
  done <<'TASKS'
gemm_tiled gemm M=512,N=512,K=512
dense_gemm dense N=1000,K=1280,affine=shift
conv2d_1x1_gemm conv2d C=64,H=56,W=56,K=128,R=1,S=1,affine=scale_shift,act=relu
conv2d_direct conv2d C=32,H=56,W=56,K=64,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu
depthwise_direct depthwise_conv2d C=128,H=56,W=56,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=hardswish
clblast_gemm gemm M=512,N=512,K=512
clblast_dense dense N=1000,K=1280,affine=shift
clblast_conv2d conv2d C=32,H=56,W=56,K=64,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=relu
TASKS
fi
