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
  MatchResult result = Result(
      MakeWorkload(
          "batch_matmul",
          {{"B", *batch}, {"M", a[r - 2]}, {"N", b[r - 1]}, {"K", a[r - 1]}}),
      {i});
  Match* m = std::get_if<Match>(&result);
  if (m != nullptr && c.bind) {
    m->buffers = {BindInput(c.g, Input(n, 0), &m->error),
                  BindInput(c.g, Input(n, 1), &m->error),
                  BindTensor(Output(n, 0))};
  }
  return result;
}

// The weight of a dense layer as its templates read it, K x N row-major:
// MatMul's as stored, Gemm's with transB (stored N x K) transposed.
std::vector<float> DenseWeight(std::vector<float> w, bool trans_b, int64_t k,
                               int64_t n) {
  if (!trans_b || static_cast<int64_t>(w.size()) != k * n) return w;
  std::vector<float> out(w.size());
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t col = 0; col < k; ++col) out[col * n + row] = w[row * k + col];
  }
  return out;
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
  if (site.bias) site.bias_name = Input(n, 2);
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
  if (Match* m = std::get_if<Match>(&r)) {
    for (int node : nodes) {
      if (!Output(g.node(node), 0).empty()) {
        g.SetShape(Output(g.node(node), 0), {*elements / k, out});
      }
    }
    if (c.bind) {
      m->error = e.error;
      m->buffers.push_back(BindInput(g, n.input(0), &m->error));
      std::optional<std::vector<float>> weight = g.Floats(n.input(1));
      if (!weight) {
        m->error = "weight " + n.input(1) + " cannot be read";
        weight.emplace();
      }
      m->buffers.push_back(
          BindConstant(DenseWeight(*std::move(weight), trans_b, k, out)));
      BindEpilogue(g, e, /*residual_arg=*/true, m);
    }
  }
  return r;
}

}  // namespace tunefleet::onnx_import
