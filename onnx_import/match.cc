#include "onnx_import/match.h"

#include <algorithm>
#include <set>

namespace tunefleet::onnx_import {

absl::StatusOr<templates::Workload> MakeWorkload(
    absl::string_view op, std::vector<templates::Dim> dims,
    std::vector<templates::Attr> attrs) {
  return templates::Workload::Create(op, std::move(dims),
                                     templates::Dtype::kFp32, std::move(attrs));
}

StepBuffer BindInput(const GraphIndex& g, const std::string& name,
                     std::string* error) {
  if (!g.IsConstant(name)) return BindTensor(name);
  std::optional<std::vector<float>> v = g.Floats(name);
  if (!v) {
    *error = "constant " + name + " cannot be read (its data type or location)";
    return {};
  }
  return BindConstant(*std::move(v));
}

StepBuffer BindTensor(const std::string& name) {
  StepBuffer b;
  b.tensor = name;
  return b;
}

StepBuffer BindConstant(std::vector<float> values) {
  StepBuffer b;
  b.constant = std::move(values);
  return b;
}

void BindEpilogue(const GraphIndex& g, const Epilogue& e, bool residual_arg,
                  Match* m) {
  m->buffers.push_back(BindTensor(e.out));
  m->buffers.push_back(BindConstant(e.ScaleBuffer()));
  m->buffers.push_back(BindConstant(e.ShiftBuffer()));
  if (residual_arg) {
    m->buffers.push_back(e.residual == "add"
                             ? BindInput(g, e.residual_tensor, &m->error)
                             : BindConstant({0.0f}));
  }
  m->floats = e.Floats();
}

std::optional<std::pair<Dims, Dims>> WindowPads(const onnx::NodeProto& n,
                                                const Dims& in,
                                                const Dims& kernel,
                                                const Dims& strides,
                                                const Dims& dilations) {
  const size_t rank = in.size();
  if (kernel.size() != rank || strides.size() != rank ||
      dilations.size() != rank) {
    return std::nullopt;
  }
  std::pair<Dims, Dims> out{Dims(rank, 0), Dims(rank, 0)};
  const std::string auto_pad = StringAttr(n, "auto_pad");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t k = 0; k < rank; ++k) {
      // Every value is <= kMaxDim (checked by the callers): no overflow.
      const int64_t outs = (in[k] + strides[k] - 1) / strides[k];
      const int64_t total = std::max<int64_t>(
          (outs - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - in[k],
          0);
      const int64_t small = total / 2, big = total - small;
      out.first[k] = auto_pad == "SAME_UPPER" ? small : big;
      out.second[k] = auto_pad == "SAME_UPPER" ? big : small;
    }
    return out;
  }
  if (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "VALID") {
    return std::nullopt;
  }
  if (auto_pad == "VALID") return out;
  const Dims pads = IntsAttr(n, "pads", Dims(2 * rank, 0));
  if (pads.size() != 2 * rank) return std::nullopt;
  for (size_t k = 0; k < rank; ++k) {
    if (pads[k] < 0 || pads[rank + k] < 0 || pads[k] > templates::kMaxDim ||
        pads[rank + k] > templates::kMaxDim) {
      return std::nullopt;
    }
    out.first[k] = pads[k];
    out.second[k] = pads[rank + k];
  }
  return out;
}

MatchResult Result(absl::StatusOr<templates::Workload> workload,
                   std::vector<int> nodes) {
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  return Match{*std::move(workload), std::move(nodes)};
}

std::optional<std::pair<int64_t, int64_t>> SymmetricPads(
    const onnx::NodeProto& n) {
  const std::string auto_pad = StringAttr(n, "auto_pad");
  if (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "VALID") {
    return std::nullopt;
  }
  const Dims pads = IntsAttr(n, "pads", {0, 0, 0, 0});
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) {
    return std::nullopt;
  }
  return std::make_pair(pads[0], pads[1]);
}

MatchResult MatchNode(const MatchContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    return NoMatch{"an op of domain " + n.domain()};
  }
  if (op == "Conv") {
    if (std::optional<Match> gate = MatchChannelGate(c, i)) return *gate;
    return MatchConv(c, i);
  }
  if (op == "ConvTranspose") return MatchConvTranspose(c, i);
  if (op == "MatMul" || op == "Gemm") return MatchMatMul(c, i);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "GlobalMaxPool") {
    if (std::optional<Match> block = MatchSeBlock(c, i)) return *block;
    return MatchPool(c, i);
  }
  if (op == "Softmax") return MatchSoftmax(c, i);
  if (op == "Resize" || op == "Upsample") return MatchResize(c, i);
  if (op == "LayerNormalization") return MatchLayerNorm(c, i);
  if (op == "ReduceMean") {
    MatchResult r = MatchLayerNorm(c, i);
    if (std::holds_alternative<Match>(r)) return r;
    return NoMatch{
        "no template for this op (a ReduceMean outside a "
        "LayerNorm)"};
  }
  static const std::set<std::string> kEltwise = {"Add",
                                                 "Sub",
                                                 "Mul",
                                                 "Div",
                                                 "Max",
                                                 "Min",
                                                 "Relu",
                                                 "Sigmoid",
                                                 "Clip",
                                                 "HardSigmoid",
                                                 "HardSwish",
                                                 "LeakyRelu",
                                                 "BatchNormalization",
                                                 "Pow"};
  if (kEltwise.count(op) || IsUnaryEltwise(op)) return MatchEltwise(c, i);
  return NoMatch{"no template for this op"};
}

}  // namespace tunefleet::onnx_import
