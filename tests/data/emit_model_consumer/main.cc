// For each workload on the command line (canonical strings as `tunefleet
// tasks` prints them), runs tunefleet_tuned::Run on the first OpenCL device
// and compares the output with a plain C++ implementation of the op and its
// epilogue, written here independently of the OpenCL kernels; and checks
// that a short form of the workload (dims at their default and the dtype
// left out, the rest reversed and comma-separated) reads as the canonical
// one. Conv and dense workloads pass the residual buffer only when their
// residual attribute is "add" (5 buffers otherwise, as callers written
// before it did). Ops: conv2d, depthwise_conv2d, dense (their epilogue:
// affine, residual, act, post), gemm, eltwise (every fn and b), resize
// (nearest with its rounding modes, linear; the four coordinate modes),
// conv_transpose2d, batch_matmul, layernorm (eps 1e-5), pool2d,
// global_pool, softmax. Prints one line per workload; exit code 0 when all
// match (relative error < 1e-4).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "first_queue.h"
#include "host_conv_transpose.h"
#include "task_parse.h"
#include "tunefleet_tuned.h"

namespace {

// layernorm's eps as the application passes it.
constexpr float kEps = 1e-5f;

using consumer_support::ConvTransposeSums;
using consumer_support::HostConvTransposeSums;
using consumer_support::ParseTask;
using consumer_support::Task;

// `canonical` as a user may write it: "conv2d act=relu,K=32,...,C=16"
// without the dims at the defaults of the built-in ops and without fp32.
std::string ShortForm(const std::string& canonical) {
  std::istringstream in(canonical);
  std::string op, token;
  in >> op;
  std::vector<std::string> kept;
  const std::vector<std::string> defaults = {"N=1",  "G=1",  "SH=1", "SW=1",
                                             "DH=1", "DW=1", "PH=0", "PW=0"};
  while (in >> token) {
    const bool is_default =
        std::find(defaults.begin(), defaults.end(), token) != defaults.end() ||
        (op == "dense" && token == "M=1");
    if (!is_default && token != "fp32") kept.push_back(token);
  }
  std::string out = op + " ";
  for (size_t i = kept.size(); i-- > 0;) {
    out += kept[i] + (i > 0 ? "," : "");
  }
  return out;
}

// The activation parameters an application passes for each kind.
void ActParams(const std::string& act, float* a, float* b) {
  *a = 0, *b = 0;
  if (act == "clip") *a = 0, *b = 6;
  if (act == "hardsigmoid") *a = 0.2f, *b = 0.5f;
  if (act == "hardswish") *a = 1.0f / 6, *b = 0.5f;
  if (act == "leakyrelu") *a = 0.01f;
}

std::string AttrOf(const Task& t, const std::string& name) {
  auto it = t.attr.find(name);
  return it == t.attr.end() ? "" : it->second;
}

// The epilogue of output element i of channel c (of `channels`): affine,
// the residual, the activation, the post-activation scale and shift (in
// the second half of scale and shift).
double Epilogue(double x, int c, const Task& t, const std::vector<float>& scale,
                const std::vector<float>& shift,
                const std::vector<float>& residual, size_t i, size_t channels) {
  const std::string affine = AttrOf(t, "affine"), act = AttrOf(t, "act");
  if (affine == "scale_shift") x = x * scale[c] + shift[c];
  if (affine == "shift") x = x + shift[c];
  if (AttrOf(t, "residual") == "add") x = x + residual[i];
  float a, b;
  ActParams(act, &a, &b);
  auto hsig = [&](double v) { return std::min(1.0, std::max(0.0, a * v + b)); };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  if (act == "relu") x = std::max(x, 0.0);
  if (act == "clip") x = std::min<double>(b, std::max<double>(a, x));
  if (act == "hardsigmoid") x = hsig(x);
  if (act == "hardswish") x = x * hsig(x);
  if (act == "leakyrelu") x = x >= 0 ? x : a * x;
  if (act == "sigmoid") x = sigmoid(x);
  if (act == "silu") x = x * sigmoid(x);
  if (AttrOf(t, "post") == "scale_shift") {
    x = x * scale[channels + c] + shift[channels + c];
  }
  return x;
}

// Elements of a convolution's output (N x K x P x Q, K = `channels`).
size_t ConvOutputs(const Task& t, size_t channels) {
  const long long P =
      (t.d.at("H") + 2 * t.d.at("PH") - t.d.at("DH") * (t.d.at("R") - 1) - 1) /
          t.d.at("SH") +
      1;
  const long long Q =
      (t.d.at("W") + 2 * t.d.at("PW") - t.d.at("DW") * (t.d.at("S") - 1) - 1) /
          t.d.at("SW") +
      1;
  return size_t(t.d.at("N") * P * Q) * channels;
}

// Host implementations. Shapes: NCHW tensors, OIHW weights.
std::vector<double> Conv(const Task& t, const std::vector<float>& in,
                         const std::vector<float>& w,
                         const std::vector<float>& scale,
                         const std::vector<float>& shift,
                         const std::vector<float>& residual, bool depthwise) {
  const long long N = t.d.at("N"), C = t.d.at("C"), H = t.d.at("H"),
                  W = t.d.at("W"), R = t.d.at("R"), S = t.d.at("S"),
                  SH = t.d.at("SH"), SW = t.d.at("SW"), PH = t.d.at("PH"),
                  PW = t.d.at("PW"), DH = t.d.at("DH"), DW = t.d.at("DW");
  const long long K = depthwise ? C : t.d.at("K");
  const long long G = depthwise ? C : t.d.at("G");
  const long long P = (H + 2 * PH - DH * (R - 1) - 1) / SH + 1;
  const long long Q = (W + 2 * PW - DW * (S - 1) - 1) / SW + 1;
  const long long cg = C / G, kg = K / G;
  std::vector<double> out(N * K * P * Q);
  for (long long n = 0; n < N; ++n)
    for (long long k = 0; k < K; ++k)
      for (long long p = 0; p < P; ++p)
        for (long long q = 0; q < Q; ++q) {
          double sum = 0;
          const long long g = k / kg;
          for (long long c = 0; c < cg; ++c)
            for (long long r = 0; r < R; ++r)
              for (long long s = 0; s < S; ++s) {
                const long long h = p * SH - PH + r * DH,
                                x = q * SW - PW + s * DW;
                if (h < 0 || h >= H || x < 0 || x >= W) continue;
                sum += double(in[((n * C + g * cg + c) * H + h) * W + x]) *
                       w[((k * cg + c) * R + r) * S + s];
              }
          const size_t i = ((n * K + k) * P + p) * Q + q;
          out[i] = Epilogue(sum, int(k), t, scale, shift, residual, i, K);
        }
  return out;
}

std::vector<double> Dense(const Task& t, const std::vector<float>& in,
                          const std::vector<float>& w,
                          const std::vector<float>& scale,
                          const std::vector<float>& shift,
                          const std::vector<float>& residual) {
  const long long M = t.d.at("M"), N = t.d.at("N"), K = t.d.at("K");
  std::vector<double> out(M * N);
  for (long long m = 0; m < M; ++m)
    for (long long n = 0; n < N; ++n) {
      double sum = 0;
      for (long long k = 0; k < K; ++k)
        sum += double(in[m * K + k]) * w[k * N + n];
      out[m * N + n] =
          Epilogue(sum, int(n), t, scale, shift, residual, m * N + n, N);
    }
  return out;
}

std::vector<double> Pool(const Task& t, const std::vector<float>& in,
                         bool global) {
  const long long N = t.d.at("N"), C = t.d.at("C"), H = t.d.at("H"),
                  W = t.d.at("W");
  const long long R = global ? H : t.d.at("R"), S = global ? W : t.d.at("S");
  const long long SH = global ? 1 : t.d.at("SH"),
                  SW = global ? 1 : t.d.at("SW");
  const long long PH = global ? 0 : t.d.at("PH"),
                  PW = global ? 0 : t.d.at("PW");
  const long long P = (H + 2 * PH - R) / SH + 1, Q = (W + 2 * PW - S) / SW + 1;
  const bool max = t.attr.count("mode") == 0 || t.attr.at("mode") == "max";
  std::vector<double> out(N * C * P * Q);
  for (long long nc = 0; nc < N * C; ++nc)
    for (long long p = 0; p < P; ++p)
      for (long long q = 0; q < Q; ++q) {
        double acc = max ? -INFINITY : 0;
        long long count = 0;
        for (long long r = 0; r < R; ++r)
          for (long long s = 0; s < S; ++s) {
            const long long h = p * SH - PH + r, x = q * SW - PW + s;
            if (h < 0 || h >= H || x < 0 || x >= W) continue;
            const double v = in[(nc * H + h) * W + x];
            acc = max ? std::max(acc, v) : acc + v;
            ++count;
          }
        out[(nc * P + p) * Q + q] = max ? acc : acc / count;
      }
  return out;
}

std::vector<double> Softmax(const Task& t, const std::vector<float>& in) {
  const long long N = t.d.at("N"), D = t.d.at("D");
  std::vector<double> out(N * D);
  for (long long n = 0; n < N; ++n) {
    double m = -INFINITY, sum = 0;
    for (long long i = 0; i < D; ++i) m = std::max(m, double(in[n * D + i]));
    for (long long i = 0; i < D; ++i) sum += std::exp(in[n * D + i] - m);
    for (long long i = 0; i < D; ++i)
      out[n * D + i] = std::exp(in[n * D + i] - m) / sum;
  }
  return out;
}

// Elementwise: output[n, c, h, w] = epilogue(fn(A, B), c), B indexed as
// the workload's b attribute says (tensor: the element's own, scalar: the
// one value, channel: c, nc: n * C + c).
std::vector<double> Eltwise(const Task& t, const std::vector<float>& a,
                            const std::vector<float>& b,
                            const std::vector<float>& scale,
                            const std::vector<float>& shift) {
  const long long N = t.d.at("N"), C = t.d.at("C"),
                  plane = t.d.at("H") * t.d.at("W");
  const std::string fn = AttrOf(t, "fn"), mode = AttrOf(t, "b");
  std::vector<double> out(N * C * plane);
  for (long long n = 0; n < N; ++n)
    for (long long c = 0; c < C; ++c)
      for (long long p = 0; p < plane; ++p) {
        const size_t i = (n * C + c) * plane + p;
        const double x = a[i];
        double v = 0;
        if (fn != "none" && !fn.empty()) {
          v = mode == "scalar"    ? b[0]
              : mode == "channel" ? b[c]
              : mode == "nc"      ? b[n * C + c]
                                  : b[i];
        }
        double y = x;
        if (fn == "add") y = x + v;
        if (fn == "sub") y = x - v;
        if (fn == "mul") y = x * v;
        if (fn == "div") y = x / v;
        if (fn == "max") y = std::max(x, v);
        if (fn == "min") y = std::min(x, v);
        out[i] = Epilogue(y, int(c), t, scale, shift, {}, i, C);
      }
  return out;
}

// ONNX Resize (opset 11+, onnx.ai/onnx/operators/onnx__Resize.html) of one
// axis: the source coordinate of output index x, with scale out / in.
double ResizeSource(long long x, long long in, long long out,
                    const std::string& coord) {
  const double scale = double(out) / in;
  if (coord == "asymmetric") return x / scale;
  if (coord == "align_corners") {
    return out == 1 ? 0.0 : x * double(in - 1) / (out - 1);
  }
  if (coord == "pytorch_half_pixel" && out == 1) return 0.0;
  return (x + 0.5) / scale - 0.5;  // half_pixel (the default)
}

// Nearest: the input index of source coordinate v, clamped to the edge.
long long ResizeNearest(double v, long long in, const std::string& round) {
  double i;
  if (round == "floor") {
    i = std::floor(v);
  } else if (round == "ceil") {
    i = std::ceil(v);
  } else {  // round_prefer_floor: halves go down
    i = v - std::floor(v) == 0.5 ? std::floor(v) : std::round(v);
  }
  return std::min<long long>(std::max<long long>((long long)i, 0), in - 1);
}

// Resize of N x C x H x W to N x C x OH x OW: nearest or bilinear (the
// source coordinate clamped to the input, the two neighbours weighted).
std::vector<double> Resize(const Task& t, const std::vector<float>& in) {
  const long long planes = t.d.at("N") * t.d.at("C"), H = t.d.at("H"),
                  W = t.d.at("W"), OH = t.d.at("OH"), OW = t.d.at("OW");
  std::string mode = AttrOf(t, "mode"), coord = AttrOf(t, "coord"),
              round = AttrOf(t, "round");
  std::vector<double> out(planes * OH * OW);
  for (long long pl = 0; pl < planes; ++pl)
    for (long long y = 0; y < OH; ++y)
      for (long long x = 0; x < OW; ++x) {
        const double sy = ResizeSource(y, H, OH, coord),
                     sx = ResizeSource(x, W, OW, coord);
        const float* plane = in.data() + pl * H * W;
        double v;
        if (mode == "linear") {
          const double cy = std::min(std::max(sy, 0.0), double(H - 1)),
                       cx = std::min(std::max(sx, 0.0), double(W - 1));
          const long long y0 = (long long)std::floor(cy),
                          x0 = (long long)std::floor(cx);
          const long long y1 = std::min(y0 + 1, H - 1),
                          x1 = std::min(x0 + 1, W - 1);
          const double wy = cy - y0, wx = cx - x0;
          const double top =
              plane[y0 * W + x0] * (1 - wx) + plane[y0 * W + x1] * wx;
          const double bottom =
              plane[y1 * W + x0] * (1 - wx) + plane[y1 * W + x1] * wx;
          v = top * (1 - wy) + bottom * wy;
        } else {
          v = plane[ResizeNearest(sy, H, round) * W +
                    ResizeNearest(sx, W, round)];
        }
        out[(pl * OH + y) * OW + x] = v;
      }
  return out;
}

// Transposed convolution (HostConvTransposeSums), then the epilogue per
// output channel.
std::vector<double> ConvTranspose(const Task& t, const std::vector<float>& in,
                                  const std::vector<float>& w,
                                  const std::vector<float>& scale,
                                  const std::vector<float>& shift) {
  const ConvTransposeSums sums = HostConvTransposeSums(
      [&](const char* name) { return t.d.at(name); }, in, w);
  std::vector<double> out = sums.sums;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = Epilogue(out[i], static_cast<int>(sums.Channel(i)), t, scale,
                      shift, {}, i, sums.K);
  }
  return out;
}

// C[b] = A[b] * B[b], row-major M x K times K x N.
std::vector<double> BatchMatmul(const Task& t, const std::vector<float>& a,
                                const std::vector<float>& b) {
  const long long B = t.d.at("B"), M = t.d.at("M"), N = t.d.at("N"),
                  K = t.d.at("K");
  std::vector<double> out(B * M * N, 0.0);
  for (long long z = 0; z < B; ++z)
    for (long long m = 0; m < M; ++m)
      for (long long k = 0; k < K; ++k) {
        const double v = a[(z * M + m) * K + k];
        for (long long n = 0; n < N; ++n)
          out[(z * M + m) * N + n] += v * b[(z * K + k) * N + n];
      }
  return out;
}

// Layer normalisation of each row of N x D (biased variance, as ONNX
// LayerNormalization), then * gamma + beta with affine=scale_shift.
std::vector<double> LayerNorm(const Task& t, const std::vector<float>& in,
                              const std::vector<float>& gamma,
                              const std::vector<float>& beta, double eps) {
  const long long N = t.d.at("N"), D = t.d.at("D");
  const bool affine = AttrOf(t, "affine") == "scale_shift";
  std::vector<double> out(N * D);
  for (long long n = 0; n < N; ++n) {
    double mean = 0, var = 0;
    for (long long d = 0; d < D; ++d) mean += in[n * D + d];
    mean /= D;
    for (long long d = 0; d < D; ++d) {
      var += (in[n * D + d] - mean) * (in[n * D + d] - mean);
    }
    var /= D;
    for (long long d = 0; d < D; ++d) {
      double y = (in[n * D + d] - mean) / std::sqrt(var + eps);
      if (affine) y = y * gamma[d] + beta[d];
      out[n * D + d] = y;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [device, context, queue] = consumer_support::OpenFirstQueue();
  if (queue == nullptr) return 3;
  cl_int err = CL_SUCCESS;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const Task t = ParseTask(argv[i]);
    std::vector<std::vector<float>> host;  // buffers in the op's order
    std::vector<double> expect;
    size_t out_index = 1;
    float a = 0, b = 0;
    ActParams(t.attr.count("act") ? t.attr.at("act") : "", &a, &b);
    if (t.op == "conv2d" || t.op == "depthwise_conv2d" || t.op == "dense") {
      const bool dense = t.op == "dense", dw = t.op == "depthwise_conv2d";
      size_t in_n, w_n, channels;
      if (dense) {
        in_n = t.d.at("M") * t.d.at("K");
        w_n = t.d.at("K") * t.d.at("N");
        channels = t.d.at("N");
      } else {
        in_n = t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W");
        channels = dw ? t.d.at("C") : t.d.at("K");
        w_n = channels * (dw ? 1 : t.d.at("C") / t.d.at("G")) * t.d.at("R") *
              t.d.at("S");
      }
      const size_t out_n =
          dense ? t.d.at("M") * channels : ConvOutputs(t, channels);
      const size_t affine_n =
          channels * (AttrOf(t, "post") == "scale_shift" ? 2 : 1);
      const bool residual = AttrOf(t, "residual") == "add";
      std::vector<float> in = random(in_n), w = random(w_n);
      std::vector<float> scale = random(affine_n), shift = random(affine_n);
      std::vector<float> res = residual ? random(out_n) : std::vector<float>();
      expect = dense ? Dense(t, in, w, scale, shift, res)
                     : Conv(t, in, w, scale, shift, res, dw);
      host = {in, w, std::vector<float>(expect.size()), scale, shift};
      if (residual) host.push_back(res);
      out_index = 2;
    } else if (t.op == "gemm") {
      const long long M = t.d.at("M"), N = t.d.at("N"), K = t.d.at("K");
      std::vector<float> in = random(M * K), w = random(K * N);
      expect.assign(M * N, 0.0);
      for (long long m = 0; m < M; ++m)
        for (long long n = 0; n < N; ++n)
          for (long long k = 0; k < K; ++k)
            expect[m * N + n] += double(in[m * K + k]) * w[k * N + n];
      host = {in, w, std::vector<float>(expect.size())};
      out_index = 2;
    } else if (t.op == "eltwise") {
      const long long N = t.d.at("N"), C = t.d.at("C");
      const size_t total = N * C * t.d.at("H") * t.d.at("W");
      const std::string fn = AttrOf(t, "fn"), mode = AttrOf(t, "b");
      const size_t b_n = fn.empty() || fn == "none" ? 1
                         : mode == "scalar"         ? 1
                         : mode == "channel"        ? C
                         : mode == "nc"             ? N * C
                                                    : total;
      const size_t affine_n = C * (AttrOf(t, "post") == "scale_shift" ? 2 : 1);
      std::vector<float> x = random(total), y = random(b_n);
      // Divisors kept away from 0: 0.5 to 1.5 in magnitude.
      if (fn == "div") {
        for (float& v : y) v = std::copysign(0.5f + std::fabs(v), v);
      }
      std::vector<float> scale = random(affine_n), shift = random(affine_n);
      expect = Eltwise(t, x, y, scale, shift);
      host = {x, y, std::vector<float>(expect.size()), scale, shift};
      out_index = 2;
    } else if (t.op == "conv_transpose2d") {
      const long long K = t.d.at("K");
      const size_t affine_n = K * (AttrOf(t, "post") == "scale_shift" ? 2 : 1);
      std::vector<float> in =
          random(t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W"));
      std::vector<float> w =
          random(t.d.at("C") * (K / t.d.at("G")) * t.d.at("R") * t.d.at("S"));
      std::vector<float> scale = random(affine_n), shift = random(affine_n);
      expect = ConvTranspose(t, in, w, scale, shift);
      host = {in, w, std::vector<float>(expect.size()), scale, shift};
      out_index = 2;
    } else if (t.op == "resize") {
      std::vector<float> in =
          random(t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W"));
      expect = Resize(t, in);
      host = {in, std::vector<float>(expect.size())};
    } else if (t.op == "batch_matmul") {
      const long long B = t.d.at("B");
      std::vector<float> x = random(B * t.d.at("M") * t.d.at("K"));
      std::vector<float> y = random(B * t.d.at("K") * t.d.at("N"));
      expect = BatchMatmul(t, x, y);
      host = {x, y, std::vector<float>(expect.size())};
      out_index = 2;
    } else if (t.op == "layernorm") {
      const long long D = t.d.at("D");
      const size_t affine_n = AttrOf(t, "affine") == "scale_shift" ? D : 1;
      std::vector<float> in = random(t.d.at("N") * D);
      std::vector<float> gamma = random(affine_n), beta = random(affine_n);
      expect = LayerNorm(t, in, gamma, beta, kEps);
      host = {in, std::vector<float>(expect.size()), gamma, beta};
    } else {
      std::vector<float> in =
          t.op == "softmax"
              ? random(t.d.at("N") * t.d.at("D"))
              : random(t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W"));
      expect = t.op == "softmax" ? Softmax(t, in)
                                 : Pool(t, in, t.op == "global_pool");
      host = {in, std::vector<float>(expect.size())};
    }
    std::vector<cl_mem> buffers;
    for (std::vector<float>& h : host) {
      buffers.push_back(clCreateBuffer(context,
                                       CL_MEM_COPY_HOST_PTR | CL_MEM_READ_WRITE,
                                       h.size() * 4, h.data(), &err));
    }
    // The activation's two parameters, or layernorm's eps.
    const bool act_floats = t.op == "conv2d" || t.op == "depthwise_conv2d" ||
                            t.op == "dense" || t.op == "eltwise" ||
                            t.op == "conv_transpose2d";
    const float floats[2] = {t.op == "layernorm" ? kEps : a, b};
    const size_t num_floats = act_floats ? 2 : t.op == "layernorm" ? 1 : 0;
    err = tunefleet_tuned::Run(queue, argv[i], buffers.data(), buffers.size(),
                               floats, num_floats);
    std::vector<float> out(expect.size());
    if (err == CL_SUCCESS) {
      err =
          clEnqueueReadBuffer(queue, buffers[out_index], CL_TRUE, 0,
                              out.size() * 4, out.data(), 0, nullptr, nullptr);
    }
    double worst = 0, scale = 1e-30;
    for (size_t j = 0; j < expect.size(); ++j) {
      scale = std::max(scale, std::fabs(expect[j]));
      worst = std::max(worst, std::fabs(expect[j] - out[j]));
    }
    const double rel = err == CL_SUCCESS ? worst / scale : INFINITY;
    const std::string short_form = ShortForm(argv[i]);
    const std::string described = tunefleet_tuned::DescribeRun(device, argv[i]);
    const bool short_ok =
        tunefleet_tuned::CanonicalWorkload(short_form.c_str()) == argv[i] &&
        tunefleet_tuned::DescribeRun(device, short_form.c_str()) == described &&
        !described.empty();
    const std::string failed =
        err == CL_SUCCESS ? "" : " (OpenCL error " + std::to_string(err) + ")";
    std::printf("%s: %s rel=%g%s device=%s short='%s' %s\n", argv[i],
                rel < 1e-4 ? "OK" : "MISMATCH", rel, failed.c_str(),
                described.c_str(), short_form.c_str(),
                short_ok ? "OK" : "MISMATCH");
    failures += !(rel < 1e-4) + !short_ok;
    for (cl_mem m : buffers) clReleaseMemObject(m);
  }
  consumer_support::CloseQueue(context, queue);
  return failures == 0 ? 0 : 1;
}
