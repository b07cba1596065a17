#include "onnx_import/match.h"

#include <set>

namespace tunefleet::onnx_import {

absl::StatusOr<templates::Workload> MakeWorkload(
    absl::string_view op, std::vector<templates::Dim> dims,
    std::vector<templates::Attr> attrs) {
  return templates::Workload::Create(op, std::move(dims),
                                     templates::Dtype::kFp32, std::move(attrs));
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
  if (op == "Conv") return MatchConv(c, i);
  if (op == "ConvTranspose") return MatchConvTranspose(c, i);
  if (op == "MatMul" || op == "Gemm") return MatchMatMul(c, i);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "GlobalMaxPool") {
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
                                                 "BatchNormalization"};
  if (kEltwise.count(op)) return MatchEltwise(c, i);
  return NoMatch{"no template for this op"};
}

}  // namespace tunefleet::onnx_import
