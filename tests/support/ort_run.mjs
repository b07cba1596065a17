#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (npm's onnxruntime-node, CPU
// execution provider) on given inputs: the oracle tunefleet's model outputs
// are compared with (docs/ORT_ORACLE.md).
//
//   node tests/support/ort_run.mjs --model M.onnx --out DIR
//       [--input NAME=FILE.npy ...] [--random-input NAME=D0,D1,...]
//       [--seed N] [--runs N] [--warmup N] [--threads N] [--ort-dir DIR]
//       [--optimization all|extended|basic|disabled]
//
// Every model input is given as a .npy file or drawn at random (uniform in
// [0, 1), float32, from --seed; written to DIR/inputs/). Each output is
// written to DIR/<name>.npy, the name with every character outside
// [A-Za-z0-9._-] replaced by '_' (base/npy.h's NpyFileName). Prints one
// JSON object on stdout:
//   {"model", "ort": {"runtime", "version", "execution_provider",
//    "threads"}, "inputs": {NAME: {"file", "shape", "dtype"}},
//    "outputs": {NAME: {"file", "shape", "dtype"}}, "load_ms",
//    "latency_ms": {"median", "p10", "p90", "runs", "warmup"}}
// The first session.run() gives the outputs; then --warmup untimed runs
// (default 1), then --runs timed ones (default 1; 0: latency_ms is null).
// latency_ms: the median, 10th and 90th percentile of those, in ms.
// --optimization: ORT's graph optimization level (default all, ORT's own
// default); `disabled` runs the graph as written (no BatchNormalization
// folded into Conv, no fusions): the two differ by fp32 rounding alone.
// Errors go to stderr with exit code 1 (2 for a bad command line).
// tests/support/ort_run.py is the same command for Python's onnxruntime.
//
// ONNX Runtime is loaded from --ort-dir, else $TUNEFLEET_ORT_DIR, else the
// repository's .cache/ort (deploy/fetch-ort.sh installs it there).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

function fail(message, code = 1) {
  process.stderr.write(`ort_run: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const a = { inputs: [], random: [], seed: 1, runs: 1, warmup: 1, threads: 0, optimization: 'all' };
  const intArg = (name, v, min) => {
    if (!/^\d+$/.test(v ?? '') || Number(v) < min) {
      fail(`${name} wants an integer >= ${min}, got '${v}'`, 2);
    }
    return Number(v);
  };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) fail(`${flag} wants a value`, 2);
    switch (flag) {
      case '--model': a.model = value; break;
      case '--out': a.out = value; break;
      case '--input': a.inputs.push(value); break;
      case '--random-input': a.random.push(value); break;
      case '--seed': a.seed = intArg(flag, value, 0); break;
      case '--runs': a.runs = intArg(flag, value, 0); break;
      case '--warmup': a.warmup = intArg(flag, value, 0); break;
      case '--threads': a.threads = intArg(flag, value, 0); break;
      case '--ort-dir': a.ortDir = value; break;
      case '--optimization':
        if (!['all', 'extended', 'basic', 'disabled'].includes(value)) fail(`--optimization wants all, extended, basic or disabled, got '${value}'`, 2);
        a.optimization = value; break;
      default: fail(`unknown flag '${flag}' (see the comment at the top of ${fileURLToPath(import.meta.url)})`, 2);
    }
  }
  if (!a.model || !a.out) fail('--model and --out are required', 2);
  return a;
}

// NAME=VALUE, split at the last '=' (tensor names may hold '=').
function splitAssignment(flag, text) {
  const at = text.lastIndexOf('=');
  if (at <= 0) fail(`${flag} wants NAME=VALUE, got '${text}'`, 2);
  return [text.slice(0, at), text.slice(at + 1)];
}

export function npyFileName(tensorName) {
  return tensorName.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy';
}

// The .npy dtypes (descr) this script reads and writes, and their ORT
// tensor types and typed arrays. Little-endian ('<'); '|' for one byte.
const DTYPES = [
  ['<f4', 'float32', Float32Array], ['<f8', 'float64', Float64Array],
  ['<f2', 'float16', Uint16Array], ['<i8', 'int64', BigInt64Array],
  ['<i4', 'int32', Int32Array], ['<i2', 'int16', Int16Array],
  ['|i1', 'int8', Int8Array], ['<u8', 'uint64', BigUint64Array],
  ['<u4', 'uint32', Uint32Array], ['<u2', 'uint16', Uint16Array],
  ['|u1', 'uint8', Uint8Array], ['|b1', 'bool', Uint8Array],
];

// Reads a .npy file (NumPy's format, numpy/lib/format.py):
//   bytes 0-5  magic "\x93NUMPY"
//   byte 6, 7  format version major, minor (1.0, 2.0 or 3.0)
//   then the header length: uint16 LE (1.0) or uint32 LE (2.0, 3.0)
//   then the header: a Python dict literal, e.g.
//     {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 48, 192), }
//     padded with spaces and a '\n' so the data starts 64-byte aligned
//   then the data, C order when fortran_order is False.
function readNpy(file) {
  let bytes;
  try { bytes = fs.readFileSync(file); } catch (e) { fail(`cannot read ${file}: ${e.message}`); }
  const bad = (why) => fail(`${file}: not a .npy file this reads: ${why}`);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') bad('no \\x93NUMPY magic');
  const major = bytes[6];
  if (major < 1 || major > 3) bad(`format version ${major}.${bytes[7]}`);
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const dataStart = (major === 1 ? 10 : 12) + headerLength;
  if (dataStart > bytes.length) bad('the header runs past the end of the file');
  const header = bytes.toString(major === 3 ? 'utf8' : 'latin1', dataStart - headerLength, dataStart);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) bad(`header without descr, fortran_order or shape: ${header.trim()}`);
  if (fortran[1] === 'True') bad('fortran_order arrays are not read (save with np.ascontiguousarray)');
  const dtype = DTYPES.find(([d]) => d === descr[1] || d === descr[1].replace('=', '<'));
  if (!dtype) bad(`dtype '${descr[1]}' (reads ${DTYPES.map(([d]) => d).join(' ')})`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (dims.some((d) => !Number.isSafeInteger(d) || d < 0)) bad(`shape (${shape[1]})`);
  const count = dims.reduce((x, y) => x * y, 1);
  const [, type, Array] = dtype;
  if (bytes.length - dataStart !== count * Array.BYTES_PER_ELEMENT) {
    bad(`${bytes.length - dataStart} data bytes for shape (${dims}) of ${type}`);
  }
  // Copied: the typed array must start aligned to its element size.
  const data = new Array(count);
  new Uint8Array(data.buffer).set(bytes.subarray(dataStart));
  return { type, dims, data };
}

// Writes a .npy file, format 1.0 (2.0 when the header needs more room).
function writeNpy(file, type, dims, data) {
  const dtype = DTYPES.find(([, t]) => t === type);
  if (!dtype) fail(`output ${file}: ORT type ${type} has no .npy dtype here`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let dict = `{'descr': '${dtype[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const v1 = dict.length + 11 < 65536;
  const prefix = v1 ? 10 : 12;
  dict += ' '.repeat(63 - ((prefix + dict.length) % 64)) + '\n';
  const head = Buffer.alloc(prefix);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = v1 ? 1 : 2;
  head[7] = 0;
  if (v1) head.writeUInt16LE(dict.length, 8); else head.writeUInt32LE(dict.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(dict, 'latin1'), body]));
}

// Uniform float32 in [0, 1): element i (from 0) is the top 24 bits of
// the (i+1)-th output of splitmix64 seeded with `seed`, / 2^24:
//   z = seed + (i+1) * 0x9e3779b97f4a7c15 (mod 2^64), then splitmix64's mix.
// Reproducible in any language (ort_run.py has the same).
function randomTensor(dims, seed) {
  const count = dims.reduce((x, y) => x * y, 1);
  const out = new Float32Array(count);
  const mask = (1n << 64n) - 1n;
  for (let i = 0; i < count; ++i) {
    let z = (BigInt(seed) + (BigInt(i) + 1n) * 0x9e3779b97f4a7c15n) & mask;
    z = (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n & mask;
    z = (z ^ (z >> 27n)) * 0x94d049bb133111ebn & mask;
    z ^= z >> 31n;
    out[i] = Number(z >> 40n) / 16777216;
  }
  return out;
}

function percentile(sorted, p) {
  // Linear interpolation between closest ranks (NumPy's default).
  const at = (sorted.length - 1) * p;
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ortDir = args.ortDir ?? process.env.TUNEFLEET_ORT_DIR ?? path.join(HERE, '..', '..', '.cache', 'ort');
  let ort;
  try {
    ort = createRequire(path.join(path.resolve(ortDir), 'package.json'))('onnxruntime-node');
  } catch (e) {
    fail(`ONNX Runtime is not installed in ${ortDir} (bash deploy/fetch-ort.sh installs it): ${e.message}`);
  }
  const t0 = performance.now();
  let session;
  try {
    session = await ort.InferenceSession.create(args.model, {
      executionProviders: ['cpu'], intraOpNumThreads: args.threads,
      graphOptimizationLevel: args.optimization,
    });
  } catch (e) {
    fail(`cannot load ${args.model}: ${e.message}`);
  }
  const loadMs = performance.now() - t0;

  fs.mkdirSync(args.out, { recursive: true });
  const feeds = {};
  const inputs = {};
  for (const spec of args.inputs) {
    const [name, file] = splitAssignment('--input', spec);
    const { type, dims, data } = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, dims);
    inputs[name] = { file: path.resolve(file), shape: dims, dtype: type };
  }
  for (const spec of args.random) {
    const [name, text] = splitAssignment('--random-input', spec);
    const dims = text.split(',').map(Number);
    if (dims.some((d) => !Number.isSafeInteger(d) || d < 1)) fail(`--random-input ${name}: bad dims '${text}'`, 2);
    const data = randomTensor(dims, args.seed);
    const file = path.resolve(args.out, 'inputs', npyFileName(name));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeNpy(file, 'float32', dims, data);
    feeds[name] = new ort.Tensor('float32', data, dims);
    inputs[name] = { file, shape: dims, dtype: 'float32' };
  }
  const unknown = Object.keys(feeds).filter((n) => !session.inputNames.includes(n));
  if (unknown.length) fail(`the model has no input ${unknown.join(', ')} (its inputs: ${session.inputNames.join(', ')})`, 2);
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) fail(`no value for the model's input ${missing.join(', ')} (--input NAME=FILE.npy or --random-input NAME=DIMS)`, 2);

  let results;
  try {
    results = await session.run(feeds);
    for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  } catch (e) {
    fail(`ONNX Runtime failed on ${args.model}: ${e.message}`);
  }
  const times = [];
  for (let i = 0; i < args.runs; ++i) {
    const start = performance.now();
    await session.run(feeds);
    times.push(performance.now() - start);
  }
  times.sort((x, y) => x - y);

  const outputs = {};
  const files = new Set();
  for (const name of session.outputNames) {
    const tensor = results[name];
    const file = path.resolve(args.out, npyFileName(name));
    if (files.has(file)) fail(`two outputs map to the file ${file}`);
    files.add(file);
    writeNpy(file, tensor.type, tensor.dims, tensor.data);
    outputs[name] = { file, shape: Array.from(tensor.dims), dtype: tensor.type };
  }
  const round = (x) => Math.round(x * 1e4) / 1e4;
  process.stdout.write(JSON.stringify({
    model: path.resolve(args.model),
    ort: { runtime: 'onnxruntime-node', version: ort.env.versions?.node ?? 'unknown', execution_provider: 'cpu', threads: args.threads },
    inputs, outputs, load_ms: round(loadMs),
    latency_ms: times.length === 0 ? null : {
      median: round(percentile(times, 0.5)), p10: round(percentile(times, 0.1)),
      p90: round(percentile(times, 0.9)), runs: args.runs, warmup: args.warmup,
    },
  }) + '\n');
}

await main();
