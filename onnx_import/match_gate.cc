// A squeeze-and-excitation block's excitation and scaling -> channel_gate
// (issue 36): Conv (1x1 on an N x C x 1 x 1 map, with its bias and folded
// epilogue: act1) -> Conv (1x1 back to C, act2) -> Mul(x, gate) with the
// gate broadcast per channel of x (N x C x H x W), and an Add of a tensor
// of x's shape right after (det's x + x * se(x)) as residual=add. The
// global pool that makes the N x C x 1 x 1 map stays its own step.
#include <optional>
#include <variant>

#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

bool DefaultDomain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// The single consumer of `name` not yet in a task, or -1 (also for a graph
// output, which the model's caller reads).
int SingleConsumer(const GraphIndex& g, const std::string& name,
                   const std::vector<bool>& covered) {
  if (name.empty() || g.IsGraphOutput(name)) return -1;
  const std::vector<int>& next = g.Consumers(name);
  if (next.size() != 1 || covered[next[0]]) return -1;
  return next[0];
}

// A 1x1 Conv of group 1 with no padding, a constant weight of `channels`
// inputs, on an input of dims batch x channels x 1 x 1 and an output of
// batch x K x 1 x 1: K, or nullopt.
std::optional<int64_t> PointwiseOnPooled(const GraphIndex& g,
                                         const onnx::NodeProto& n,
                                         int64_t batch, int64_t channels) {
  if (n.op_type() != "Conv" || !DefaultDomain(n) || n.input_size() < 2 ||
      n.output_size() < 1 || !g.IsConstant(n.input(1))) {
    return std::nullopt;
  }
  std::optional<std::vector<Dims>> shapes =
      g.Shapes({n.input(0), n.input(1), n.output(0)});
  if (!shapes || (*shapes)[0] != Dims{batch, channels, 1, 1}) {
    return std::nullopt;
  }
  const Dims& w = (*shapes)[1];
  if (w.size() != 4 || w[1] != channels || w[2] != 1 || w[3] != 1 ||
      (*shapes)[2] != Dims{batch, w[0], 1, 1} || IntAttr(n, "group", 1) != 1) {
    return std::nullopt;
  }
  const std::optional<std::pair<Dims, Dims>> pads =
      WindowPads(n, {1, 1}, {1, 1}, IntsAttr(n, "strides", {1, 1}),
                 IntsAttr(n, "dilations", {1, 1}));
  if (!pads || pads->first != Dims{0, 0} || pads->second != Dims{0, 0}) {
    return std::nullopt;
  }
  return w[0];
}

// The epilogue of 1x1 Conv `n` of `channels` outputs on the pooled map:
// affine and act only (no residual, no post step).
Epilogue PointwiseEpilogue(const GraphIndex& g, const onnx::NodeProto& n,
                           int64_t channels, const std::vector<bool>& covered) {
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = channels;
  site.bias = n.input_size() > 2 && !n.input(2).empty();
  if (site.bias) site.bias_name = n.input(2);
  site.residual = false;
  site.post = false;
  return FoldEpilogue(g, site, covered);
}

// Conv weight `name` (rows x cols x 1 x 1) with row k scaled by the
// epilogue's scale[k]: rows x cols fp32 values; error set when unreadable.
std::vector<float> ScaledRows(const GraphIndex& g, const std::string& name,
                              const std::vector<double>& scale, int64_t rows,
                              int64_t cols, std::string* error) {
  std::optional<std::vector<float>> w = g.Floats(name);
  if (!w || static_cast<int64_t>(w->size()) != rows * cols ||
      static_cast<int64_t>(scale.size()) != rows) {
    *error = "weight " + name + " cannot be read (its data type or location)";
    return {};
  }
  for (int64_t k = 0; k < rows; ++k) {
    for (int64_t j = 0; j < cols; ++j) {
      (*w)[k * cols + j] = static_cast<float>((*w)[k * cols + j] * scale[k]);
    }
  }
  return *std::move(w);
}

std::vector<float> AsFloats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace

std::optional<Match> MatchChannelGate(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& squeeze = g.node(i);
  // Conv 1: N x C x 1 x 1 -> N x R x 1 x 1.
  std::optional<std::vector<Dims>> in = g.Shapes({Input(squeeze, 0)});
  if (!in || (*in)[0].size() != 4) return std::nullopt;
  const int64_t n = (*in)[0][0], ch = (*in)[0][1];
  const std::optional<int64_t> r = PointwiseOnPooled(g, squeeze, n, ch);
  if (!r) return std::nullopt;
  const Epilogue e1 = PointwiseEpilogue(g, squeeze, *r, c.covered);
  // Conv 2: N x R x 1 x 1 -> N x C x 1 x 1, the only reader of conv 1's
  // activation.
  const int excite = SingleConsumer(g, e1.out, c.covered);
  if (excite < 0 || Input(g.node(excite), 0) != e1.out ||
      PointwiseOnPooled(g, g.node(excite), n, *r) != ch) {
    return std::nullopt;
  }
  const Epilogue e2 = PointwiseEpilogue(g, g.node(excite), ch, c.covered);
  // Mul(x, gate) or Mul(gate, x), x N x C x H x W, the gate's only reader.
  const int mul = SingleConsumer(g, e2.out, c.covered);
  if (mul < 0) return std::nullopt;
  const onnx::NodeProto& m = g.node(mul);
  if (m.op_type() != "Mul" || !DefaultDomain(m) || m.input_size() != 2 ||
      m.input(0) == m.input(1)) {
    return std::nullopt;
  }
  const std::string& x = m.input(0) == e2.out ? m.input(1) : m.input(0);
  std::optional<std::vector<Dims>> xs = g.Shapes({x, Output(m, 0)});
  if (!xs || (*xs)[0].size() != 4 || (*xs)[0][0] != n || (*xs)[0][1] != ch ||
      (*xs)[1] != (*xs)[0] || g.IsConstant(x)) {
    return std::nullopt;
  }
  const Dims& dims = (*xs)[0];
  std::vector<int> nodes = e1.Covering(i);
  const std::vector<int> second = e2.Covering(excite);
  nodes.insert(nodes.end(), second.begin(), second.end());
  nodes.push_back(mul);
  // An Add of a computed tensor of x's shape, the product's only reader:
  // residual=add.
  std::string out = Output(m, 0), residual;
  const int add = SingleConsumer(g, out, c.covered);
  if (add >= 0 && g.node(add).op_type() == "Add" &&
      DefaultDomain(g.node(add)) && g.node(add).input_size() == 2) {
    const onnx::NodeProto& a = g.node(add);
    const std::string& other = a.input(0) == out ? a.input(1) : a.input(0);
    if (other != out && !g.IsConstant(other) && g.Shape(other) == dims &&
        g.Shape(Output(a, 0)) == dims) {
      residual = other;
      out = Output(a, 0);
      nodes.push_back(add);
    }
  }
  absl::StatusOr<templates::Workload> w = MakeWorkload(
      "channel_gate",
      {{"N", n}, {"C", ch}, {"H", dims[2]}, {"W", dims[3]}, {"R", *r}},
      {{"act1", e1.act},
       {"act2", e2.act},
       {"residual", residual.empty() ? "none" : "add"}});
  if (!w.ok()) return std::nullopt;  // the convolutions run as they are
  Match match{*std::move(w), std::move(nodes)};
  if (!c.bind) return match;
  match.error = !e1.error.empty() ? e1.error : e2.error;
  std::string* error = &match.error;
  match.buffers.push_back(BindInput(g, x, error));
  match.buffers.push_back(BindInput(g, Input(squeeze, 0), error));
  match.buffers.push_back(BindTensor(out));
  match.buffers.push_back(
      BindConstant(ScaledRows(g, Input(squeeze, 1), e1.scale, *r, ch, error)));
  match.buffers.push_back(BindConstant(AsFloats(e1.shift)));
  match.buffers.push_back(BindConstant(
      ScaledRows(g, Input(g.node(excite), 1), e2.scale, ch, *r, error)));
  match.buffers.push_back(BindConstant(AsFloats(e2.shift)));
  match.buffers.push_back(residual.empty() ? BindConstant({0.0f})
                                           : BindInput(g, residual, error));
  const std::vector<float> f1 = e1.Floats(), f2 = e2.Floats();
  match.floats = {f1[0], f1[1], f2[0], f2[1]};
  return match;
}

}  // namespace tunefleet::onnx_import
