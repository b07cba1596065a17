// MatMul / Gemm with a constant weight -> dense (its epilogue folded);
// MatMul of two computed tensors -> batch_matmul.
#include <algorithm>

#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

MatchResult MatchBatchMatmul(const MatchContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  std::optional<std::vector<Dims>> shapes =
      c.g.Shapes({Input(n, 0), Input(n, 1)});
  if (!shapes) return NoMatch{"input shape unknown"};
  const Dims& a = (*shapes)[0];
  const Dims& b = (*shapes)[1];
  if (a.size() < 2 || b.size() < 2) {
    return NoMatch{"a product with a 1-D operand"};
  }
  const size_t r = a.size();
  if (r != b.size() || !std::equal(a.begin(), a.end() - 2, b.begin())) {
    return NoMatch{"batch dims differ (broadcast batch)"};
  }
  if (a[r - 1] != b[r - 2]) return NoMatch{"inner dims differ"};
  std::optional<int64_t> batch = Product(a, 0, r - 2);
  if (!batch) return NoMatch{"shape too large"};
  return Result(
      MakeWorkload(
          "batch_matmul",
          {{"B", *batch}, {"M", a[r - 2]}, {"N", b[r - 1]}, {"K", a[r - 1]}}),
      {i});
}

}  // namespace

MatchResult MatchMatMul(const MatchContext& c, int i) {
  GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  const bool gemm = n.op_type() == "Gemm";
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  if (!g.IsConstant(n.input(1))) {
    if (gemm) return NoMatch{"weight is not constant"};
    return MatchBatchMatmul(c, i);
  }
  std::optional<Dims> w = g.Shape(n.input(1));
  if (!w || w->size() != 2) return NoMatch{"weight is not a 2D constant"};
  if (gemm && (IntAttr(n, "transA", 0) != 0 || FloatAttr(n, "alpha", 1) != 1 ||
               FloatAttr(n, "beta", 1) != 1)) {
    return NoMatch{"transA, alpha or beta other than 0, 1, 1"};
  }
  const bool trans_b = gemm && IntAttr(n, "transB", 0) != 0;
  const int64_t k = trans_b ? (*w)[1] : (*w)[0];
  const int64_t out = trans_b ? (*w)[0] : (*w)[1];
  std::optional<int64_t> elements = g.Elements(n.input(0));
  if (k < 1 || out < 1 || !elements || *elements % k != 0) {
    return NoMatch{"input shape unknown or not a multiple of the weight's"};
  }
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = out;
  std::optional<Dims> y = g.Shape(n.output(0));
  site.rank = y ? static_cast<int>(y->size()) : 2;
  site.channel_axis = site.rank - 1;
  site.bias = gemm && !Input(n, 2).empty();
  if (site.bias) {
    std::optional<Dims> bias = g.ConstantDims(Input(n, 2));
    if (!bias || (*bias != Dims{out} && *bias != Dims{1, out})) {
      return NoMatch{"Gemm's C is not a constant bias per output"};
    }
  }
  const Epilogue e = FoldEpilogue(g, site, c.covered);
  const std::vector<int> nodes = e.Covering(i);
  MatchResult r =
      Result(MakeWorkload("dense", {{"M", *elements / k}, {"N", out}, {"K", k}},
                          e.Attrs(site)),
             nodes);
  if (std::holds_alternative<Match>(r)) {
    for (int node : nodes) {
      if (!Output(g.node(node), 0).empty()) {
        g.SetShape(Output(g.node(node), 0), {*elements / k, out});
      }
    }
  }
  return r;
}

}  // namespace tunefleet::onnx_import
