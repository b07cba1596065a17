#!/usr/bin/env python3
"""ort_run.mjs for Python's onnxruntime (CPU execution provider).

The same command line, files and JSON as tests/support/ort_run.mjs, for a
machine that has the `onnxruntime` Python package (and NumPy) instead of
Node.js; the C++ oracle uses it when TUNEFLEET_ORT_COMMAND says so:

  TUNEFLEET_ORT_COMMAND="python3 tests/support/ort_run.py" ctest -R ...
  python3 tests/support/ort_run.py --model M.onnx --out DIR
      [--input NAME=FILE.npy ...] [--random-input NAME=D0,D1,...]
      [--seed N] [--runs N] [--warmup N] [--threads N]
      [--optimization all|extended|basic|disabled]

See ort_run.mjs for what each flag does; --ort-dir is accepted and ignored.
"""
import argparse
import json
import os
import re
import sys
import time


def fail(message, code=1):
    sys.stderr.write(f"ort_run.py: {message}\n")
    sys.exit(code)


def npy_file_name(tensor_name):
    """The tensor's file name: [A-Za-z0-9._-] kept, the rest '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", tensor_name) + ".npy"


def random_tensor(np, dims, seed):
    """Uniform float32 in [0, 1): splitmix64 as in ort_run.mjs."""
    count = 1
    for d in dims:
        count *= d
    i = np.arange(1, count + 1, dtype=np.uint64)
    u64 = np.uint64
    with np.errstate(over="ignore"):
        z = u64(seed) + i * u64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
        z = z ^ (z >> u64(31))
    u = (z >> u64(40)).astype(np.float32) / np.float32(16777216)
    return u.reshape(dims)


def split_assignment(flag, text):
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        fail(f"{flag} wants NAME=VALUE, got '{text}'", 2)
    return name, value


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--random-input", action="append", default=[])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--ort-dir")  # ort_run.mjs's; nothing to do here
    p.add_argument("--optimization", default="all",
                   choices=["all", "extended", "basic", "disabled"])
    a = p.parse_args()
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        fail(f"ONNX Runtime for Python is not installed: {e}")

    options = ort.SessionOptions()
    options.intra_op_num_threads = a.threads
    options.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }[a.optimization]
    t0 = time.perf_counter()
    try:
        session = ort.InferenceSession(
            a.model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own exception types
        fail(f"cannot load {a.model}: {e}")
    load_ms = (time.perf_counter() - t0) * 1e3

    os.makedirs(a.out, exist_ok=True)
    feeds, inputs = {}, {}
    for spec in a.input:
        name, file = split_assignment("--input", spec)
        try:
            value = np.load(file, allow_pickle=False)
        except Exception as e:
            fail(f"cannot read {file}: {e}")
        feeds[name] = value
        inputs[name] = {"file": os.path.abspath(file),
                        "shape": list(value.shape), "dtype": str(value.dtype)}
    for spec in a.random_input:
        name, text = split_assignment("--random-input", spec)
        try:
            dims = [int(d) for d in text.split(",")]
        except ValueError:
            fail(f"--random-input {name}: bad dims '{text}'", 2)
        value = random_tensor(np, dims, a.seed)
        file = os.path.abspath(os.path.join(a.out, "inputs",
                                            npy_file_name(name)))
        os.makedirs(os.path.dirname(file), exist_ok=True)
        np.save(file, value)
        feeds[name] = value
        inputs[name] = {"file": file, "shape": dims, "dtype": "float32"}
    names = [i.name for i in session.get_inputs()]
    unknown = [n for n in feeds if n not in names]
    if unknown:
        fail(f"the model has no input {', '.join(unknown)} "
             f"(its inputs: {', '.join(names)})", 2)
    missing = [n for n in names if n not in feeds]
    if missing:
        fail(f"no value for the model's input {', '.join(missing)} "
             "(--input NAME=FILE.npy or --random-input NAME=DIMS)", 2)

    try:
        results = session.run(None, feeds)
        for _ in range(a.warmup):
            session.run(None, feeds)
    except Exception as e:
        fail(f"ONNX Runtime failed on {a.model}: {e}")
    times = []
    for _ in range(a.runs):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)

    outputs, files = {}, set()
    for meta, value in zip(session.get_outputs(), results):
        file = os.path.abspath(os.path.join(a.out, npy_file_name(meta.name)))
        if file in files:
            fail(f"two outputs map to the file {file}")
        files.add(file)
        value = np.ascontiguousarray(value)
        np.save(file, value)
        outputs[meta.name] = {"file": file, "shape": list(value.shape),
                              "dtype": str(value.dtype)}
    latency = None
    if times:
        latency = {"median": round(float(np.percentile(times, 50)), 4),
                   "p10": round(float(np.percentile(times, 10)), 4),
                   "p90": round(float(np.percentile(times, 90)), 4),
                   "runs": a.runs, "warmup": a.warmup}
    print(json.dumps({
        "model": os.path.abspath(a.model),
        "ort": {"runtime": "onnxruntime (python)", "version": ort.__version__,
                "execution_provider": "cpu", "threads": a.threads},
        "inputs": inputs, "outputs": outputs, "load_ms": round(load_ms, 4),
        "latency_ms": latency}))


if __name__ == "__main__":
    main()
