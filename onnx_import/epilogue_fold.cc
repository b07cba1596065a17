#include "onnx_import/epilogue_fold.h"

#include <cmath>
#include <limits>
#include <optional>

namespace tunefleet::onnx_import {
namespace {

// The node's inputs other than `x`: the operand of a binary node, or ""
// when `x` is not one of its two inputs.
std::string Other(const onnx::NodeProto& n, const std::string& x) {
  if (n.input_size() != 2) return "";
  if (n.input(0) == x && n.input(1) != x) return n.input(1);
  if (n.input(1) == x && n.input(0) != x) return n.input(0);
  return "";
}

// Whether `name` is a constant that broadcasts as a scalar or per channel
// against the site's output (aligned from the right, like numpy).
bool PerChannel(const GraphIndex& g, const std::string& name,
                const EpilogueSite& site) {
  if (name.empty() || !g.IsConstant(name)) return false;
  std::optional<Dims> d = g.ConstantDims(name);
  if (!d || static_cast<int>(d->size()) > site.rank) return false;
  for (size_t k = 0; k < d->size(); ++k) {
    const int axis =
        site.rank - static_cast<int>(d->size()) + static_cast<int>(k);
    if ((*d)[k] == 1) continue;
    if (axis != site.channel_axis || (*d)[k] != site.channels) return false;
  }
  return true;
}

// Whether BatchNormalization `bn` normalises the site's channels: BN's
// channels are always axis 1, and its scale holds one value per channel.
bool BatchNormOfSiteChannels(const GraphIndex& g, const onnx::NodeProto& bn,
                             const EpilogueSite& site) {
  if (site.channel_axis != 1 || site.rank < 2) return false;
  std::optional<Dims> scale = g.ConstantDims(Input(bn, 1));
  if (!scale) scale = g.Shape(Input(bn, 1));
  return scale && *scale == Dims{site.channels};
}

// The single consumer of `name`, or -1 (also when `name` is a graph
// output: the model's caller reads it).
int Single(const GraphIndex& g, const std::string& name,
           const std::vector<bool>& covered) {
  if (g.IsGraphOutput(name)) return -1;
  const std::vector<int>& next = g.Consumers(name);
  if (next.size() != 1 || covered[next[0]]) return -1;
  return next[0];
}

bool Is(const GraphIndex& g, int i, const char* op) {
  return i >= 0 && g.node(i).op_type() == op;
}

bool Near(std::optional<double> v, double want) {
  return v && std::fabs(*v - want) <= 1e-6 * std::max(1.0, std::fabs(want));
}

// Whether node `i` divides `x` by 6 or multiplies it by 1/6.
bool SixthOf(const GraphIndex& g, int i, const std::string& x) {
  if (Is(g, i, "Div")) {
    return Input(g.node(i), 0) == x && Near(g.Scalar(Input(g.node(i), 1)), 6);
  }
  return Is(g, i, "Mul") && Near(g.Scalar(Other(g.node(i), x)), 1.0 / 6);
}

bool ClipIs(const GraphIndex& g, int i, double lo, double hi) {
  if (!Is(g, i, "Clip")) return false;
  std::optional<std::pair<double, double>> b = ClipBounds(g, g.node(i));
  return b && Near(b->first, lo) && Near(b->second, hi);
}

// A spelled-out activation starting at tensor `x`.
struct Spelled {
  std::string act;
  std::vector<int> nodes;
  std::string out;
};

// Clip(x + 3, 0, 6) / 6 (or * 1/6) from `x` through its single consumer
// `add`: nodes and output, or nullopt.
std::optional<Spelled> ShiftedClipSixth(const GraphIndex& g, int add,
                                        const std::string& x,
                                        const std::vector<bool>& covered) {
  if (!Is(g, add, "Add") || !Near(g.Scalar(Other(g.node(add), x)), 3)) {
    return std::nullopt;
  }
  const int clip = Single(g, Output(g.node(add), 0), covered);
  if (!ClipIs(g, clip, 0, 6)) return std::nullopt;
  Spelled s{"", {add, clip}, Output(g.node(clip), 0)};
  const int div = Single(g, s.out, covered);
  if (SixthOf(g, div, s.out)) {
    s.nodes.push_back(div);
    s.out = Output(g.node(div), 0);
    s.act = "hardsigmoid";
  }
  return s;
}

std::optional<Spelled> SpelledActivation(const GraphIndex& g,
                                         const std::string& x,
                                         const std::vector<bool>& covered) {
  if (g.IsGraphOutput(x)) return std::nullopt;
  const std::vector<int>& next = g.Consumers(x);
  for (int i : next) {
    if (covered[i]) return std::nullopt;
  }
  if (next.size() == 1) {
    const int first = next[0];
    // Clip(x + 3, 0, 6) / 6.
    if (std::optional<Spelled> s = ShiftedClipSixth(g, first, x, covered);
        s && s->act == "hardsigmoid") {
      return s;
    }
    // Clip(x * a + b, 0, 1).
    if (Is(g, first, "Mul") && g.Scalar(Other(g.node(first), x))) {
      const std::string m = Output(g.node(first), 0);
      const int add = Single(g, m, covered);
      if (Is(g, add, "Add") && g.Scalar(Other(g.node(add), m))) {
        const int clip = Single(g, Output(g.node(add), 0), covered);
        if (ClipIs(g, clip, 0, 1)) {
          return Spelled{
              "hardsigmoid", {first, add, clip}, Output(g.node(clip), 0)};
        }
      }
    }
    return std::nullopt;
  }
  if (next.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int a = next[k], m = next[1 - k];
    if (!Is(g, m, "Mul")) continue;
    const std::string& mul_other = Other(g.node(m), x);
    // HardSwish: x * Clip(x + 3, 0, 6) / 6, the sixth before or after.
    if (std::optional<Spelled> s = ShiftedClipSixth(g, a, x, covered)) {
      if (mul_other != s->out || Single(g, s->out, covered) != m) continue;
      s->nodes.push_back(m);
      s->out = Output(g.node(m), 0);
      if (s->act.empty()) {
        const int div = Single(g, s->out, covered);
        if (!SixthOf(g, div, s->out)) continue;
        s->nodes.push_back(div);
        s->out = Output(g.node(div), 0);
      }
      s->act = "hardswish";
      return s;
    }
    // SiLU: x * Sigmoid(x), also x * Sigmoid(x * 1).
    std::vector<int> nodes;
    int sig = a;
    if (Is(g, a, "Mul")) {
      if (!Near(g.Scalar(Other(g.node(a), x)), 1)) continue;
      nodes.push_back(a);
      sig = Single(g, Output(g.node(a), 0), covered);
    }
    if (!Is(g, sig, "Sigmoid") || Output(g.node(sig), 0) != mul_other ||
        Single(g, mul_other, covered) != m) {
      continue;
    }
    nodes.insert(nodes.end(), {sig, m});
    return Spelled{"silu", nodes, Output(g.node(m), 0)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<double, double>> ClipBounds(const GraphIndex& g,
                                                    const onnx::NodeProto& n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::pair<double, double> b = {FloatAttr(n, "min", -kInf),
                                 FloatAttr(n, "max", kInf)};
  // float's lowest and max (opset 6's defaults) read as unbounded.
  if (b.first <= -std::numeric_limits<float>::max()) b.first = -kInf;
  if (b.second >= std::numeric_limits<float>::max()) b.second = kInf;
  for (int k = 1; k <= 2; ++k) {
    if (Input(n, k).empty()) continue;
    std::optional<double> v = g.Scalar(Input(n, k));
    if (!v) return std::nullopt;
    (k == 1 ? b.first : b.second) = *v;
  }
  return b;
}

std::string BroadcastKind(const Dims& b, const Dims& out, int* axis) {
  if (b == out) return "tensor";
  if (b.size() > out.size()) return "";
  const size_t lead = out.size() - b.size();
  std::vector<int> big;
  for (size_t k = 0; k < b.size(); ++k) {
    if (b[k] == 1) continue;
    if (b[k] != out[lead + k]) return "";
    big.push_back(static_cast<int>(lead + k));
  }
  if (big.empty()) return "scalar";
  if (big.size() == 1) {
    *axis = big[0];
    return "channel";
  }
  if (out.size() == 4 && big == std::vector<int>{0, 1}) return "nc";
  return "";
}

std::vector<templates::Attr> Epilogue::Attrs(const EpilogueSite& site) const {
  std::vector<templates::Attr> attrs = {{"affine", affine}, {"act", act}};
  if (site.residual) attrs.push_back({"residual", residual});
  if (site.post) attrs.push_back({"post", post});
  return attrs;
}

std::vector<int> Epilogue::Covering(int node) const {
  std::vector<int> out = {node};
  out.insert(out.end(), nodes.begin(), nodes.end());
  return out;
}

Epilogue FoldEpilogue(const GraphIndex& g, const EpilogueSite& site,
                      const std::vector<bool>& covered) {
  Epilogue e;
  e.affine = !site.affine.empty() ? site.affine : site.bias ? "shift" : "none";
  e.act = site.act;
  e.out = site.out;
  // 0: affine; 1: after the residual; 2: after the activation.
  int stage = e.act == "none" ? 0 : 2;
  auto scale = [](std::string* attr) { *attr = "scale_shift"; };
  auto shift = [](std::string* attr) {
    if (*attr == "none") *attr = "shift";
  };
  while (static_cast<int>(e.nodes.size()) < kMaxChain) {
    if (stage < 2) {
      if (std::optional<Spelled> s = SpelledActivation(g, e.out, covered)) {
        e.act = s->act;
        e.nodes.insert(e.nodes.end(), s->nodes.begin(), s->nodes.end());
        e.out = s->out;
        stage = 2;
        continue;
      }
    }
    const int i = Single(g, e.out, covered);
    if (i < 0) break;
    const onnx::NodeProto& n = g.node(i);
    const std::string& op = n.op_type();
    const std::string other = Other(n, e.out);
    const bool first = Input(n, 0) == e.out;
    const bool channel = PerChannel(g, other, site);
    // Affine steps: before the activation into `affine`, after it into
    // `post` (scale and shift buffers hold both).
    std::string* affine = stage == 0                ? &e.affine
                          : stage == 2 && site.post ? &e.post
                                                    : nullptr;
    if (op == "BatchNormalization" && first && stage == 0 &&
        BatchNormOfSiteChannels(g, n, site)) {
      scale(&e.affine);
    } else if (affine && channel && (op == "Mul" || (op == "Div" && first))) {
      scale(affine);
    } else if (affine && channel && (op == "Add" || (op == "Sub" && first))) {
      shift(affine);
    } else if (stage == 2 && e.act == "relu" && e.post == "none" &&
               op == "Min" && g.Scalar(other)) {
      e.act = "clip";
    } else if (stage < 2 && op == "Add" && site.residual &&
               e.residual == "none" && !other.empty() && !g.IsConstant(other) &&
               g.Shape(other) && g.Shape(other) == g.Shape(e.out)) {
      e.residual = "add";
      stage = 1;
    } else if (stage < 2 && first &&
               (op == "Relu" || op == "Clip" || op == "LeakyRelu" ||
                op == "Sigmoid" || op == "HardSigmoid" || op == "HardSwish")) {
      if (op == "Clip" && !ClipBounds(g, n)) break;
      e.act = op == "Relu"          ? "relu"
              : op == "Clip"        ? "clip"
              : op == "LeakyRelu"   ? "leakyrelu"
              : op == "Sigmoid"     ? "sigmoid"
              : op == "HardSigmoid" ? "hardsigmoid"
                                    : "hardswish";
      stage = 2;
    } else if (stage < 2 && op == "Max" && Near(g.Scalar(other), 0)) {
      e.act = "relu";
      stage = 2;
    } else {
      break;
    }
    e.nodes.push_back(i);
    e.out = Output(n, 0);
    if (e.out.empty()) break;
  }
  return e;
}

}  // namespace tunefleet::onnx_import
