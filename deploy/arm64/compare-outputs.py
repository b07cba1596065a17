#!/usr/bin/env python3
"""Checks `tunefleet run --json` outputs against ONNX Runtime's.

  compare-outputs.py KEY RUN.json ORT.json

RUN.json: what `tunefleet run --server ... --save-outputs DIR --json`
printed (it must have run on an agent of device key KEY); ORT.json: what
tests/support/ort_run.mjs printed for the same model and input. Every
output must have ORT's shape and lie within 1e-4 x max|reference| of it
(docs/ORT_ORACLE.md). Prints one line (the device, the latency, the largest
deviation); exits 1 with the reason otherwise. Reads float32 .npy files
without numpy (the board test's host may lack it).
"""
import ast
import json
import struct
import sys

TOLERANCE = 1e-4


def npy(path):
    """(shape, values) of a little-endian float32 C-order .npy file."""
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack_from("<H", data, 8)[0], 10
    else:
        hlen, start = struct.unpack_from("<I", data, 8)[0], 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"{path}: not float32 in C order: {header}")
    n = 1
    for d in header["shape"]:
        n *= d
    return tuple(header["shape"]), struct.unpack_from(f"<{n}f", data,
                                                      start + hlen)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    key, ours_path, ort_path = sys.argv[1:]
    ours, ort = json.load(open(ours_path)), json.load(open(ort_path))
    if ours.get("device_key") != key:
        sys.exit(f"ran for device key {ours.get('device_key')}, not {key}")
    if "agent" not in ours.get("run_on", ""):
        sys.exit(f"not run on an agent: {ours.get('run_on')}")
    if set(ours["outputs"]) != set(ort["outputs"]):
        sys.exit(f"outputs {sorted(ours['outputs'])}, "
                 f"ORT's {sorted(ort['outputs'])}")
    worst = 0.0
    for name, file in ours["outputs"].items():
        shape, mine = npy(file)
        rshape, ref = npy(ort["outputs"][name]["file"])
        if shape != rshape:
            sys.exit(f"{name}: shape {shape}, ORT's {rshape}")
        scale = max(abs(v) for v in ref) or 1.0
        dev = max(abs(a - b) for a, b in zip(mine, ref)) / scale
        if dev > TOLERANCE:
            sys.exit(f"{name}: max deviation {dev:.3g} x max|reference| > "
                     f"{TOLERANCE}")
        worst = max(worst, dev)
    print(f"{ours['model']} on {ours['device_name']} "
          f"({ours['latency_ms']['median']:.1f} ms, {ours['layers']} layers, "
          f"{ours['run_on']}) matches ONNX Runtime: max deviation "
          f"{worst:.2e} x max|reference|")


if __name__ == "__main__":
    main()
