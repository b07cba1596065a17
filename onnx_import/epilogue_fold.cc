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
  double act_a = 0, act_b = 0;  // the activation's parameters
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
  // Clip(x + 3, 0, 6) / 6 = clip(x / 6 + 0.5, 0, 1).
  Spelled s{"", {add, clip}, Output(g.node(clip), 0), 1.0 / 6, 0.5};
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
          return Spelled{"hardsigmoid",
                         {first, add, clip},
                         Output(g.node(clip), 0),
                         *g.Scalar(Other(g.node(first), x)),
                         *g.Scalar(Other(g.node(add), m))};
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

std::optional<std::vector<double>> ChannelValues(const GraphIndex& g,
                                                 const std::string& name,
                                                 int64_t channels) {
  std::optional<std::vector<float>> v = g.Floats(name);
  if (!v) return std::nullopt;
  if (v->size() == 1) return std::vector<double>(channels, (*v)[0]);
  if (static_cast<int64_t>(v->size()) != channels) return std::nullopt;
  return std::vector<double>(v->begin(), v->end());
}

std::string ActName(const std::string& op) {
  return op == "Relu"          ? "relu"
         : op == "Clip"        ? "clip"
         : op == "LeakyRelu"   ? "leakyrelu"
         : op == "Sigmoid"     ? "sigmoid"
         : op == "HardSigmoid" ? "hardsigmoid"
                               : "hardswish";
}

std::optional<std::pair<double, double>> ActParams(const GraphIndex& g,
                                                   const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Clip") return ClipBounds(g, n);
  if (op == "LeakyRelu")
    return std::make_pair(FloatAttr(n, "alpha", 0.01f), 0.0);
  if (op == "HardSigmoid") {
    return std::make_pair<double, double>(FloatAttr(n, "alpha", 0.2f),
                                          FloatAttr(n, "beta", 0.5f));
  }
  if (op == "HardSwish") return std::make_pair(1.0 / 6, 0.5);
  return std::make_pair(0.0, 0.0);
}

std::optional<std::pair<std::vector<double>, std::vector<double>>>
BatchNormAffine(const GraphIndex& g, const onnx::NodeProto& bn,
                int64_t channels) {
  std::optional<std::vector<double>> p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = ChannelValues(g, Input(bn, k + 1), channels);
    if (!p[k]) return std::nullopt;
  }
  const double eps = FloatAttr(bn, "epsilon", 1e-5f);
  std::pair<std::vector<double>, std::vector<double>> out;
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = (*p[0])[c] / std::sqrt((*p[3])[c] + eps);
    out.first.push_back(scale);
    out.second.push_back((*p[1])[c] - (*p[2])[c] * scale);
  }
  return out;
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

namespace {

std::vector<float> Concatenated(const std::vector<double>& a,
                                const std::vector<double>& b, bool both) {
  std::vector<float> out(a.begin(), a.end());
  if (both) out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

std::vector<float> Epilogue::ScaleBuffer() const {
  return Concatenated(scale, post_scale, post != "none");
}

std::vector<float> Epilogue::ShiftBuffer() const {
  return Concatenated(shift, post_shift, post != "none");
}

std::vector<float> Epilogue::Floats() const {
  return {static_cast<float>(act_a), static_cast<float>(act_b)};
}

std::vector<int> Epilogue::Covering(int node) const {
  std::vector<int> out = {node};
  out.insert(out.end(), nodes.begin(), nodes.end());
  return out;
}

Epilogue FoldEpilogue(const GraphIndex& g, const EpilogueSite& site,
                      const std::vector<bool>& covered) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Epilogue e;
  e.affine = !site.affine.empty() ? site.affine : site.bias ? "shift" : "none";
  e.act = site.act;
  e.act_a = site.act_a;
  e.act_b = site.act_b;
  e.out = site.out;
  const int64_t channels = std::max<int64_t>(site.channels, 1);
  e.scale =
      site.scale.empty() ? std::vector<double>(channels, 1.0) : site.scale;
  e.shift =
      site.shift.empty() ? std::vector<double>(channels, 0.0) : site.shift;
  e.post_scale.assign(channels, 1.0);
  e.post_shift.assign(channels, 0.0);
  if (site.bias && !site.bias_name.empty()) {
    if (std::optional<std::vector<double>> b =
            ChannelValues(g, site.bias_name, channels)) {
      for (int64_t c = 0; c < channels; ++c) e.shift[c] += (*b)[c];
    } else {
      e.error = "bias " + site.bias_name + " is not a readable constant";
    }
  }
  // 0: affine; 1: after the residual; 2: after the activation.
  int stage = e.act == "none" ? 0 : 2;
  auto scale = [](std::string* attr) { *attr = "scale_shift"; };
  auto shift = [](std::string* attr) {
    if (*attr == "none") *attr = "shift";
  };
  // Applies y * mul + add per channel to the affine (stage 0) or the post
  // (stage 2) values.
  auto apply = [&](const std::string& name, bool post, int kind) {
    std::optional<std::vector<double>> v = ChannelValues(g, name, channels);
    if (!v) {
      e.error = "constant " + name + " is not readable";
      return;
    }
    std::vector<double>& sc = post ? e.post_scale : e.scale;
    std::vector<double>& sh = post ? e.post_shift : e.shift;
    for (int64_t c = 0; c < channels; ++c) {
      const double x = (*v)[c];
      switch (kind) {
        case 0:  // Mul
          sc[c] *= x;
          sh[c] *= x;
          break;
        case 1:  // Div
          sc[c] /= x;
          sh[c] /= x;
          break;
        case 2:  // Add
          sh[c] += x;
          break;
        default:  // Sub
          sh[c] -= x;
          break;
      }
    }
  };
  while (static_cast<int>(e.nodes.size()) < kMaxChain) {
    if (stage < 2) {
      if (std::optional<Spelled> s = SpelledActivation(g, e.out, covered)) {
        e.act = s->act;
        e.act_a = s->act_a;
        e.act_b = s->act_b;
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
    const bool post = stage == 2;
    const std::optional<double> constant = g.Scalar(other);
    if (op == "BatchNormalization" && first && stage == 0 &&
        BatchNormOfSiteChannels(g, n, site)) {
      scale(&e.affine);
      if (auto bn = BatchNormAffine(g, n, channels)) {
        for (int64_t c = 0; c < channels; ++c) {
          e.scale[c] *= bn->first[c];
          e.shift[c] = e.shift[c] * bn->first[c] + bn->second[c];
        }
      } else {
        e.error = "BatchNormalization " + n.name() +
                  " has parameters that are not readable constants";
      }
    } else if (affine && channel && (op == "Mul" || (op == "Div" && first))) {
      scale(affine);
      apply(other, post, op == "Mul" ? 0 : 1);
    } else if (affine && channel && (op == "Add" || (op == "Sub" && first))) {
      shift(affine);
      apply(other, post, op == "Add" ? 2 : 3);
    } else if (stage == 2 && (e.act == "relu" || e.act == "clip") &&
               e.post == "none" && (op == "Min" || op == "Max") && constant) {
      // relu is clip(0, inf); Max raises the lower bound, Min lowers the
      // upper one.
      double lo = e.act == "relu" ? 0 : e.act_a;
      double hi = e.act == "relu" ? kInf : e.act_b;
      if (op == "Max") {
        lo = std::max(lo, *constant);
      } else {
        hi = std::min(hi, *constant);
      }
      if (lo == 0 && hi == kInf) {
        e.act = "relu";
        e.act_a = e.act_b = 0;
      } else {
        e.act = "clip";
        e.act_a = lo;
        e.act_b = hi;
      }
    } else if (stage == 2 && e.act == "leakyrelu" && e.post == "none" &&
               op == "Max" && constant && *constant >= 0 && e.act_a >= 0) {
      // max(leakyrelu(y), c) = max(y, c) for c >= 0 and alpha >= 0: where
      // y < 0, alpha * y <= 0 <= c.
      e.act = *constant == 0 ? "relu" : "clip";
      e.act_a = *constant == 0 ? 0 : *constant;
      e.act_b = *constant == 0 ? 0 : kInf;
    } else if (stage < 2 && op == "Add" && site.residual &&
               e.residual == "none" && !other.empty() && !g.IsConstant(other) &&
               g.Shape(other) && g.Shape(other) == g.Shape(e.out)) {
      e.residual = "add";
      e.residual_tensor = other;
      stage = 1;
    } else if (stage < 2 && first &&
               (op == "Relu" || op == "Clip" || op == "LeakyRelu" ||
                op == "Sigmoid" || op == "HardSigmoid" || op == "HardSwish")) {
      const std::optional<std::pair<double, double>> params = ActParams(g, n);
      if (!params) break;  // Clip bounds not constant
      e.act = ActName(op);
      e.act_a = params->first;
      e.act_b = params->second;
      stage = 2;
    } else if (stage < 2 && op == "Max" && Near(constant, 0)) {
      e.act = "relu";
      stage = 2;
    } else if (stage < 2 && (op == "Max" || op == "Min") && constant) {
      e.act = "clip";
      e.act_a = op == "Max" ? *constant : -kInf;
      e.act_b = op == "Max" ? kInf : *constant;
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
