#!/usr/bin/env python3
"""Deviations of saved fp32 outputs from a float64 run of the same model.

bench/model_e2e --save-dir DIR writes, per model, its input and the tuned
plan's, the naive plan's and ONNX Runtime's outputs (with its graph
optimizations on, its default, and off: the graph as written) as .npy files
(<model>.input.<name>.npy,
<model>.<tuned|naive|ort|ort-unoptimized>.<output>.npy). This
script runs the model once more in float64 with the PyTorch peer that
deploy/gpu-pack.sh packs (PEER_TOOL, as peer.py beside this script in the
pack: its ONNX-to-PyTorch Model, every float32 tensor widened to float64)
and prints, per output, max|x - fp64| / max|fp64| for each fp32 result:
which of them is nearest to the exact answer, and how far ONNX Runtime
itself is from it (the noise floor of the 1e-4 x max|ref| bound).

  python3 fp64_deviation.py --model NAME=FILE.onnx --dir DIR [--json]
"""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402  (the packed PyTorch peer)


class Float64Model(peer.Model):
    """The peer's model with every float32 tensor widened to float64."""

    def to_dev(self, t):
        t = t.to(self.device)
        return t.to(torch.float64) if t.dtype == torch.float32 else t


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', required=True, metavar='NAME=FILE.onnx')
    ap.add_argument('--dir', required=True, help='model_e2e --save-dir output')
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    ap.add_argument('--json', action='store_true')
    args = ap.parse_args()
    name, path = args.model.split('=', 1)
    proto = onnx.load(path)
    inputs = [i.name for i in proto.graph.input
              if i.name not in {t.name for t in proto.graph.initializer}]
    feeds = {}
    for i in inputs:
        f = os.path.join(args.dir, f'{name}.input.{npy_stem(i)}.npy')
        if not os.path.exists(f):
            sys.exit(f'fp64_deviation: no {f}: run bench/model_e2e --save-dir {args.dir}')
        feeds[i] = np.load(f)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.inference_mode():
        model = Float64Model(proto, feeds, torch.device(args.device))
        outs = model(*[model.to_dev(torch.from_numpy(x)) for x in feeds.values()])
    result = {'model': name, 'outputs': {}}
    for out_name, o in zip(model.out_names, outs):
        truth = o.double().cpu().numpy()
        saved = {}
        for what in ('tuned', 'naive', 'ort', 'ort-unoptimized'):
            f = os.path.join(args.dir, f'{name}.{what}.{npy_stem(out_name)}.npy')
            if os.path.exists(f):
                saved[what] = np.load(f).astype(np.float64).reshape(truth.shape)
        row = {w: deviation(x, truth) for w, x in saved.items()}
        for w in ('tuned', 'naive'):
            for o in ('ort', 'ort-unoptimized'):
                if w in saved and o in saved:
                    row[f'{w}_vs_{o}'] = deviation(saved[w], saved[o])
        result['outputs'][out_name] = row
    if args.json:
        print(json.dumps(result))
        return
    for out_name, row in result['outputs'].items():
        print(f'{name} {out_name}: max|x - fp64| / max|fp64|: ' +
              ', '.join(f'{k} {v:.3e}' for k, v in row.items()))


def npy_stem(n):
    """base::NpyFileName's file name of a tensor, without ".npy"."""
    return re.sub(r'[^A-Za-z0-9_.-]', '_', n)


def deviation(x, ref):
    """max|x - ref| / max|ref|."""
    return float(np.abs(x - ref).max()) / max(float(np.abs(ref).max()), 1e-30)


if __name__ == '__main__':
    main()
