// A host-side runner of a ModelGraph's steps for the lowering tests: the
// semantics of the ops the lowerings emit (copy, fill, reduce, eltwise,
// softmax, batch_matmul, conv2d, depthwise_conv2d, conv_transpose2d,
// pool2d, global_pool, channel_gate, se_block, dense, layernorm, nearest
// asymmetric resize), written from their op documentation (docs/OPS.md,
// kernels_templates/workload.cc, common/epilogue.cl), so that a test checks a
// lowering's numbers, not only its workloads. Small tensors only; not a
// runtime.
#ifndef TUNEFLEET_TESTS_UNIT_ONNX_IMPORT_STEP_SIMULATOR_H_
#define TUNEFLEET_TESTS_UNIT_ONNX_IMPORT_STEP_SIMULATOR_H_

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onnx_import/model_graph.h"
#include "tests/data/consumer_support/host_conv_transpose.h"
#include "tests/support/host_activation.h"

namespace tunefleet::testing {

using onnx_import::ModelGraph;
using onnx_import::ModelStep;
using onnx_import::StepBuffer;

class StepSimulator {
 public:
  explicit StepSimulator(const ModelGraph& m) : m_(m) {}

  // Runs every step on `inputs` (graph input name -> values) and returns
  // the graph's outputs by name. An op it does not know fails the test.
  std::map<std::string, std::vector<float>> Run(
      const std::map<std::string, std::vector<float>>& inputs) {
    for (const auto& [name, t] : m_.tensors) {
      if (t.alias_of.empty()) store_[name].assign(Count(t.dims), NAN);
    }
    for (const auto& [name, v] : inputs) store_[name] = v;
    for (const ModelStep& s : m_.steps) Step(s);
    std::map<std::string, std::vector<float>> out;
    for (const std::string& o : m_.outputs) {
      auto c = m_.constant_outputs.find(o);
      out[o] = c != m_.constant_outputs.end() ? c->second : Buffer(o);
    }
    return out;
  }

 private:
  static int64_t Count(const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
  }

  std::vector<float>& Buffer(const std::string& name) {
    auto t = m_.tensors.find(name);
    if (t == m_.tensors.end()) {
      ADD_FAILURE() << "no tensor " << name;
      return store_[name];
    }
    return store_[t->second.alias_of.empty() ? name : t->second.alias_of];
  }

  const std::vector<float>& In(const StepBuffer& b) {
    return b.tensor.empty() ? b.constant : Buffer(b.tensor);
  }

  // The epilogue of y at channel c of `channels` (common/epilogue.cl).
  static float Epilogue(const templates::Workload& w, float y, float r,
                        int64_t c, int64_t channels,
                        const std::vector<float>& scale,
                        const std::vector<float>& shift,
                        const std::vector<float>& f) {
    if (w.attr("affine") == "scale_shift") y = y * scale[c] + shift[c];
    if (w.attr("affine") == "shift") y += shift[c];
    if (w.attr("residual") == "add") y += r;
    y = HostActivation(w.attr("act"), y, f.size() > 0 ? f[0] : 0,
                       f.size() > 1 ? f[1] : 0);
    if (w.attr("post") == "scale_shift") {
      y = y * scale[channels + c] + shift[channels + c];
    }
    return y;
  }

  static float Fn(const std::string& fn, float a, float b) {
    if (fn == "add") return a + b;
    if (fn == "sub") return a - b;
    if (fn == "mul") return a * b;
    if (fn == "div") return a / b;
    if (fn == "max") return std::max(a, b);
    if (fn == "min") return std::min(a, b);
    if (fn == "pow") return std::pow(a, b);
    if (fn == "sqrt") return std::sqrt(a);
    if (fn == "exp") return std::exp(a);
    if (fn == "log") return std::log(a);
    if (fn == "abs") return std::fabs(a);
    if (fn == "neg") return -a;
    if (fn == "reciprocal") return 1 / a;
    if (fn == "tanh") return std::tanh(a);
    if (fn == "erf") return std::erf(a);
    if (fn == "floor") return std::floor(a);
    if (fn == "ceil") return std::ceil(a);
    return a;  // none
  }

  void Step(const ModelStep& s) {
    const templates::Workload& w = s.workload;
    const std::string& op = w.op();
    auto d = [&](const char* name) { return w.dim(name); };
    if (op == "copy") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      int64_t i[6];
      for (i[0] = 0; i[0] < d("D0"); ++i[0])
        for (i[1] = 0; i[1] < d("D1"); ++i[1])
          for (i[2] = 0; i[2] < d("D2"); ++i[2])
            for (i[3] = 0; i[3] < d("D3"); ++i[3])
              for (i[4] = 0; i[4] < d("D4"); ++i[4])
                for (i[5] = 0; i[5] < d("D5"); ++i[5]) {
                  int64_t from = d("IO"), to = d("OO");
                  for (int k = 0; k < 6; ++k) {
                    const std::string n = std::to_string(k);
                    from += i[k] * w.dim("IS" + n);
                    to += i[k] * w.dim("OS" + n);
                  }
                  out.at(to) = in.at(from);
                }
      return;
    }
    if (op == "fill") {
      std::vector<float>& out = Buffer(s.buffers[0].tensor);
      for (int64_t k = 0; k < d("E"); ++k) out.at(d("O") + k) = s.floats[0];
      return;
    }
    if (op == "reduce") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      const std::string fn = w.attr("fn");
      for (int64_t o = 0; o < d("O"); ++o) {
        for (int64_t x = 0; x < d("I"); ++x) {
          double acc = fn == "max"    ? -INFINITY
                       : fn == "min"  ? INFINITY
                       : fn == "prod" ? 1
                                      : 0;
          for (int64_t r = 0; r < d("R"); ++r) {
            const double v = in.at((o * d("R") + r) * d("I") + x);
            if (fn == "max")
              acc = std::max(acc, v);
            else if (fn == "min")
              acc = std::min(acc, v);
            else if (fn == "prod")
              acc *= v;
            else if (fn == "sumsquare" || fn == "l2")
              acc += v * v;
            else if (fn == "l1")
              acc += std::fabs(v);
            else if (fn == "logsumexp")
              acc += std::exp(v);
            else
              acc += v;
          }
          if (fn == "mean") acc /= d("R");
          if (fn == "l2") acc = std::sqrt(acc);
          if (fn == "logsum" || fn == "logsumexp") acc = std::log(acc);
          out.at(o * d("I") + x) = static_cast<float>(acc);
        }
      }
      return;
    }
    if (op == "eltwise") {
      const std::vector<float> a = In(s.buffers[0]), b = In(s.buffers[1]);
      std::vector<float>& out = Buffer(s.buffers[2].tensor);
      const int64_t C = d("C"), plane = d("H") * d("W");
      const int64_t total = d("N") * C * plane;
      const std::string bm = w.attr("b");
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = (i / plane) % C;
        const float bv = bm == "tensor"    ? b.at(i)
                         : bm == "scalar"  ? b.at(0)
                         : bm == "channel" ? b.at(c)
                                           : b.at(i / plane);
        const float r =
            w.attr("residual") == "add" ? In(s.buffers.at(5)).at(i) : 0;
        out.at(i) = Epilogue(w, Fn(w.attr("fn"), a.at(i), bv), r, c, C,
                             In(s.buffers[3]), In(s.buffers[4]), s.floats);
      }
      return;
    }
    if (op == "softmax") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      const int64_t D = d("D");
      for (int64_t n = 0; n < d("N"); ++n) {
        double mx = -INFINITY, sum = 0;
        for (int64_t k = 0; k < D; ++k)
          mx = std::max<double>(mx, in.at(n * D + k));
        for (int64_t k = 0; k < D; ++k) sum += std::exp(in.at(n * D + k) - mx);
        for (int64_t k = 0; k < D; ++k) {
          out.at(n * D + k) =
              static_cast<float>(std::exp(in.at(n * D + k) - mx) / sum);
        }
      }
      return;
    }
    if (op == "batch_matmul" || op == "dense") {
      const std::vector<float> a = In(s.buffers[0]), b = In(s.buffers[1]);
      std::vector<float>& out = Buffer(s.buffers[2].tensor);
      const int64_t B = op == "dense" ? 1 : d("B"), M = d("M"), N = d("N"),
                    K = d("K");
      for (int64_t x = 0; x < B; ++x)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) {
              acc += a.at((x * M + i) * K + k) *
                     b.at(op == "dense" ? k * N + j : (x * K + k) * N + j);
            }
            float y = static_cast<float>(acc);
            if (op == "dense") {
              const float r = w.attr("residual") == "add"
                                  ? In(s.buffers[5]).at(i * N + j)
                                  : 0;
              y = Epilogue(w, y, r, j, N, In(s.buffers[3]), In(s.buffers[4]),
                           s.floats);
            }
            out.at((x * M + i) * N + j) = y;
          }
      return;
    }
    if (op == "conv2d" || op == "depthwise_conv2d" || op == "pool2d") {
      const std::vector<float> in = In(s.buffers[0]);
      const bool pool = op == "pool2d", dw = op == "depthwise_conv2d";
      const int64_t N = d("N"), C = d("C"), H = d("H"), W = d("W"), R = d("R"),
                    S = d("S"), SH = d("SH"), SW = d("SW"), PH = d("PH"),
                    PW = d("PW");
      const int64_t DH = pool ? 1 : d("DH"), DW = pool ? 1 : d("DW");
      const int64_t K = pool || dw ? C : d("K"), G = pool || dw ? C : d("G");
      const int64_t P = (H + 2 * PH - DH * (R - 1) - 1) / SH + 1;
      const int64_t Q = (W + 2 * PW - DW * (S - 1) - 1) / SW + 1;
      const int64_t cg = C / G, kg = K / G;
      std::vector<float>& out = Buffer(s.buffers[pool ? 1 : 2].tensor);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t p = 0; p < P; ++p)
            for (int64_t q = 0; q < Q; ++q) {
              double acc = pool && w.attr("mode") == "max" ? -INFINITY : 0;
              int64_t count = 0;
              for (int64_t c = 0; c < (pool ? 1 : cg); ++c)
                for (int64_t r = 0; r < R; ++r)
                  for (int64_t t = 0; t < S; ++t) {
                    const int64_t h = p * SH - PH + r * DH;
                    const int64_t x = q * SW - PW + t * DW;
                    if (h < 0 || h >= H || x < 0 || x >= W) continue;
                    const int64_t ch = pool ? k : (k / kg) * cg + c;
                    const float v = in.at(((n * C + ch) * H + h) * W + x);
                    ++count;
                    if (pool) {
                      acc = w.attr("mode") == "max" ? std::max<double>(acc, v)
                                                    : acc + v;
                    } else {
                      acc +=
                          v *
                          In(s.buffers[1]).at(((k * cg + c) * R + r) * S + t);
                    }
                  }
              if (pool && w.attr("mode") == "avg") acc /= count;
              float y = static_cast<float>(acc);
              const int64_t at = ((n * K + k) * P + p) * Q + q;
              if (!pool) {
                const float res =
                    w.attr("residual") == "add" ? In(s.buffers[5]).at(at) : 0;
                y = Epilogue(w, y, res, k, K, In(s.buffers[3]),
                             In(s.buffers[4]), s.floats);
              }
              out.at(at) = y;
            }
      return;
    }
    if (op == "global_pool") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      const int64_t plane = d("H") * d("W");
      for (int64_t p = 0; p < d("N") * d("C"); ++p) {
        double acc = w.attr("mode") == "max" ? -INFINITY : 0;
        for (int64_t k = 0; k < plane; ++k) {
          const float v = in.at(p * plane + k);
          acc = w.attr("mode") == "max" ? std::max<double>(acc, v) : acc + v;
        }
        out.at(p) =
            static_cast<float>(w.attr("mode") == "max" ? acc : acc / plane);
      }
      return;
    }
    if (op == "channel_gate" || op == "se_block") {
      // channel_gate: x, s, output, w1 (R x C), b1, w2 (C x R), b2,
      // residual; se_block: the same without s, which it pools from x;
      // floats act1_a, act1_b, act2_a, act2_b (docs/OPS.md).
      const int64_t C = d("C"), R = d("R"), plane = d("H") * d("W");
      const size_t o = op == "se_block" ? 1 : 0;  // buffers after x move
      const std::vector<float> x = In(s.buffers[0]);
      std::vector<float> sq;
      if (o == 0) {
        sq = In(s.buffers[1]);
      } else {
        sq.assign(d("N") * C, 0.0f);
        for (size_t p = 0; p < sq.size(); ++p) {
          double acc = 0;
          for (int64_t k = 0; k < plane; ++k) acc += x.at(p * plane + k);
          sq[p] = static_cast<float>(acc / plane);
        }
      }
      std::vector<float>& out = Buffer(s.buffers[2 - o].tensor);
      const std::vector<float> w1 = In(s.buffers[3 - o]),
                               b1 = In(s.buffers[4 - o]),
                               w2 = In(s.buffers[5 - o]),
                               b2 = In(s.buffers[6 - o]),
                               res = In(s.buffers[7 - o]);
      const std::vector<float>& f = s.floats;
      for (int64_t n = 0; n < d("N"); ++n) {
        std::vector<float> h(R);
        for (int64_t r = 0; r < R; ++r) {
          double acc = b1.at(r);
          for (int64_t c = 0; c < C; ++c) {
            acc += w1.at(r * C + c) * sq.at(n * C + c);
          }
          h[r] = HostActivation(w.attr("act1"), static_cast<float>(acc),
                                f.at(0), f.at(1));
        }
        for (int64_t c = 0; c < C; ++c) {
          double acc = b2.at(c);
          for (int64_t r = 0; r < R; ++r) acc += w2.at(c * R + r) * h[r];
          const float g = HostActivation(
              w.attr("act2"), static_cast<float>(acc), f.at(2), f.at(3));
          for (int64_t k = 0; k < plane; ++k) {
            const int64_t i = (n * C + c) * plane + k;
            out.at(i) =
                x.at(i) * g + (w.attr("residual") == "add" ? res.at(i) : 0.0f);
          }
        }
      }
      return;
    }
    if (op == "layernorm") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      const std::vector<float>& gamma = In(s.buffers[2]);
      const std::vector<float>& beta = In(s.buffers[3]);
      const int64_t D = d("D");
      const bool affine = w.attr("affine") == "scale_shift";
      for (int64_t n = 0; n < d("N"); ++n) {
        double mean = 0, var = 0;
        for (int64_t k = 0; k < D; ++k) mean += in.at(n * D + k);
        mean /= D;
        for (int64_t k = 0; k < D; ++k) {
          var += (in.at(n * D + k) - mean) * (in.at(n * D + k) - mean);
        }
        var /= D;
        for (int64_t k = 0; k < D; ++k) {
          double y = (in.at(n * D + k) - mean) / std::sqrt(var + s.floats[0]);
          if (affine) y = y * gamma.at(k) + beta.at(k);
          out.at(n * D + k) = static_cast<float>(y);
        }
      }
      return;
    }
    if (op == "conv_transpose2d") {
      const std::vector<float> in = In(s.buffers[0]);
      const std::vector<float>& wt = In(s.buffers[1]);
      std::vector<float>& out = Buffer(s.buffers[2].tensor);
      const consumer_support::ConvTransposeSums acc =
          consumer_support::HostConvTransposeSums(d, in, wt);
      for (size_t i = 0; i < acc.sums.size(); ++i) {
        out.at(i) =
            Epilogue(w, static_cast<float>(acc.sums[i]), 0, acc.Channel(i),
                     acc.K, In(s.buffers[3]), In(s.buffers[4]), s.floats);
      }
      return;
    }
    if (op == "resize" && w.attr("mode") == "nearest" &&
        w.attr("coord") == "asymmetric" && w.attr("round") == "floor") {
      const std::vector<float> in = In(s.buffers[0]);
      std::vector<float>& out = Buffer(s.buffers[1].tensor);
      const int64_t H = d("H"), W = d("W"), OH = d("OH"), OW = d("OW");
      for (int64_t p = 0; p < d("N") * d("C"); ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t h = std::min<int64_t>(oh * H / OH, H - 1);
            const int64_t x = std::min<int64_t>(ow * W / OW, W - 1);
            out.at((p * OH + oh) * OW + ow) = in.at((p * H + h) * W + x);
          }
      return;
    }
    ADD_FAILURE() << "the simulator has no op " << op;
  }

  const ModelGraph& m_;
  std::map<std::string, std::vector<float>> store_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_UNIT_ONNX_IMPORT_STEP_SIMULATOR_H_
