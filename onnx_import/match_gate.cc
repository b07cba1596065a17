// A squeeze-and-excitation block (issue 36). From its first Conv, the
// excitation and scaling -> channel_gate: Conv (1x1 on an N x C x 1 x 1
// map, with its bias and folded epilogue: act1) -> Conv (1x1 back to C,
// act2) -> Mul(x, gate) with the gate broadcast per channel of x (N x C x
// H x W), and an Add of a tensor of x's shape right after (det's x + x *
// se(x)) as residual=add; the global pool that makes the N x C x 1 x 1
// map stays its own step. From the GlobalAveragePool of x that feeds such
// a chain, for images of at most kSeBlockMaxImage elements: the whole
// block -> se_block, one launch.
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

// A recognised excitation-and-scaling chain from its squeeze Conv.
struct GateChain {
  int squeeze = -1, excite = -1;  // the two 1x1 Conv nodes
  Epilogue e1, e2;                // their folded epilogues
  int64_t n = 0, ch = 0, r = 0;   // batch, channels, hidden units
  Dims dims;                      // x's: N x C x H x W
  std::string x;                  // the tensor scaled
  std::string out;                // the chain's output
  std::string residual;           // the tensor added, or empty
  std::vector<int> nodes;         // every node covered, squeeze first
};

// The chain from squeeze Conv `i` (match.h: MatchChannelGate), or
// nullopt.
std::optional<GateChain> FindGateChain(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& squeeze = g.node(i);
  GateChain chain;
  chain.squeeze = i;
  // Conv 1: N x C x 1 x 1 -> N x R x 1 x 1.
  std::optional<std::vector<Dims>> in = g.Shapes({Input(squeeze, 0)});
  if (!in || (*in)[0].size() != 4) return std::nullopt;
  chain.n = (*in)[0][0];
  chain.ch = (*in)[0][1];
  const std::optional<int64_t> r =
      PointwiseOnPooled(g, squeeze, chain.n, chain.ch);
  if (!r) return std::nullopt;
  chain.r = *r;
  chain.e1 = PointwiseEpilogue(g, squeeze, chain.r, c.covered);
  // Conv 2: N x R x 1 x 1 -> N x C x 1 x 1, the only reader of conv 1's
  // activation.
  chain.excite = SingleConsumer(g, chain.e1.out, c.covered);
  if (chain.excite < 0 || Input(g.node(chain.excite), 0) != chain.e1.out ||
      PointwiseOnPooled(g, g.node(chain.excite), chain.n, chain.r) !=
          chain.ch) {
    return std::nullopt;
  }
  chain.e2 = PointwiseEpilogue(g, g.node(chain.excite), chain.ch, c.covered);
  // Mul(x, gate) or Mul(gate, x), x N x C x H x W, the gate's only reader.
  const int mul = SingleConsumer(g, chain.e2.out, c.covered);
  if (mul < 0) return std::nullopt;
  const onnx::NodeProto& m = g.node(mul);
  if (m.op_type() != "Mul" || !DefaultDomain(m) || m.input_size() != 2 ||
      m.input(0) == m.input(1)) {
    return std::nullopt;
  }
  chain.x = m.input(0) == chain.e2.out ? m.input(1) : m.input(0);
  std::optional<std::vector<Dims>> xs = g.Shapes({chain.x, Output(m, 0)});
  if (!xs || (*xs)[0].size() != 4 || (*xs)[0][0] != chain.n ||
      (*xs)[0][1] != chain.ch || (*xs)[1] != (*xs)[0] ||
      g.IsConstant(chain.x)) {
    return std::nullopt;
  }
  chain.dims = (*xs)[0];
  chain.nodes = chain.e1.Covering(i);
  const std::vector<int> second = chain.e2.Covering(chain.excite);
  chain.nodes.insert(chain.nodes.end(), second.begin(), second.end());
  chain.nodes.push_back(mul);
  // An Add of a computed tensor of x's shape, the product's only reader:
  // residual=add.
  chain.out = Output(m, 0);
  const int add = SingleConsumer(g, chain.out, c.covered);
  if (add >= 0 && g.node(add).op_type() == "Add" &&
      DefaultDomain(g.node(add)) && g.node(add).input_size() == 2) {
    const onnx::NodeProto& a = g.node(add);
    const std::string& other =
        a.input(0) == chain.out ? a.input(1) : a.input(0);
    if (other != chain.out && !g.IsConstant(other) &&
        g.Shape(other) == chain.dims && g.Shape(Output(a, 0)) == chain.dims) {
      chain.residual = other;
      chain.out = Output(a, 0);
      chain.nodes.push_back(add);
    }
  }
  return chain;
}

// The match of `chain` on `op` (channel_gate or se_block), its nodes
// after `first` (the pool of se_block, none for channel_gate); with
// MatchContext::bind its buffers in the template's order: x, s (the
// squeeze's input; channel_gate only), output, both weights (the folded
// affine steps multiplied in), both biases, the residual.
std::optional<Match> GateMatch(const MatchContext& c, const GateChain& chain,
                               absl::string_view op, std::vector<int> first) {
  const GraphIndex& g = c.g;
  absl::StatusOr<templates::Workload> w =
      MakeWorkload(op,
                   {{"N", chain.n},
                    {"C", chain.ch},
                    {"H", chain.dims[2]},
                    {"W", chain.dims[3]},
                    {"R", chain.r}},
                   {{"act1", chain.e1.act},
                    {"act2", chain.e2.act},
                    {"residual", chain.residual.empty() ? "none" : "add"}});
  if (!w.ok()) return std::nullopt;  // the nodes run as they are
  first.insert(first.end(), chain.nodes.begin(), chain.nodes.end());
  Match match{*std::move(w), std::move(first)};
  if (!c.bind) return match;
  const onnx::NodeProto& squeeze = g.node(chain.squeeze);
  match.error = !chain.e1.error.empty() ? chain.e1.error : chain.e2.error;
  std::string* error = &match.error;
  match.buffers.push_back(BindInput(g, chain.x, error));
  if (op == "channel_gate") {
    match.buffers.push_back(BindInput(g, Input(squeeze, 0), error));
  }
  match.buffers.push_back(BindTensor(chain.out));
  match.buffers.push_back(BindConstant(ScaledRows(
      g, Input(squeeze, 1), chain.e1.scale, chain.r, chain.ch, error)));
  match.buffers.push_back(BindConstant(AsFloats(chain.e1.shift)));
  match.buffers.push_back(
      BindConstant(ScaledRows(g, Input(g.node(chain.excite), 1), chain.e2.scale,
                              chain.ch, chain.r, error)));
  match.buffers.push_back(BindConstant(AsFloats(chain.e2.shift)));
  match.buffers.push_back(chain.residual.empty()
                              ? BindConstant({0.0f})
                              : BindInput(g, chain.residual, error));
  const std::vector<float> f1 = chain.e1.Floats(), f2 = chain.e2.Floats();
  match.floats = {f1[0], f1[1], f2[0], f2[1]};
  return match;
}

}  // namespace

std::optional<Match> MatchChannelGate(const MatchContext& c, int i) {
  const std::optional<GateChain> chain = FindGateChain(c, i);
  if (!chain) return std::nullopt;
  return GateMatch(c, *chain, "channel_gate", {});
}

std::optional<Match> MatchSeBlock(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& pool = g.node(i);
  if (pool.op_type() != "GlobalAveragePool" || !DefaultDomain(pool) ||
      pool.input_size() != 1 || pool.output_size() != 1) {
    return std::nullopt;
  }
  const int squeeze = SingleConsumer(g, Output(pool, 0), c.covered);
  if (squeeze < 0 || g.node(squeeze).op_type() != "Conv" ||
      !DefaultDomain(g.node(squeeze)) ||
      Input(g.node(squeeze), 0) != Output(pool, 0)) {
    return std::nullopt;
  }
  const std::optional<GateChain> chain = FindGateChain(c, squeeze);
  if (!chain || chain->x != Input(pool, 0) ||
      chain->ch * chain->dims[2] * chain->dims[3] > kSeBlockMaxImage) {
    return std::nullopt;
  }
  return GateMatch(c, *chain, "se_block", {i});
}

}  // namespace tunefleet::onnx_import
