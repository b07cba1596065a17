// Conv -> conv2d / depthwise_conv2d; ConvTranspose -> conv_transpose2d;
// each with its epilogue folded.
#include "absl/strings/str_cat.h"
#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {

MatchResult MatchConv(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  std::optional<Dims> x = g.Shape(n.input(0));
  std::optional<Dims> w = g.Shape(n.input(1));
  if (!x || !w || x->size() != 4 || w->size() != 4) {
    return NoMatch{"only 2D convolutions with known shapes"};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weights are not constant"};
  std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
  if (!pads) return NoMatch{"asymmetric or automatic padding"};
  const Dims strides = IntsAttr(n, "strides", {1, 1});
  const Dims dilations = IntsAttr(n, "dilations", {1, 1});
  if (strides.size() != 2 || dilations.size() != 2) {
    return NoMatch{"strides or dilations are not 2D"};
  }
  const int64_t group = IntAttr(n, "group", 1);
  const int64_t ch = (*x)[1], k = (*w)[0];
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = k;
  site.bias = n.input_size() > 2 && !n.input(2).empty();
  const Epilogue e = FoldEpilogue(g, site, c.covered);
  std::vector<int> nodes = {i};
  nodes.insert(nodes.end(), e.nodes.begin(), e.nodes.end());
  std::vector<templates::Dim> dims = {
      {"N", (*x)[0]},       {"C", ch},
      {"H", (*x)[2]},       {"W", (*x)[3]},
      {"R", (*w)[2]},       {"S", (*w)[3]},
      {"SH", strides[0]},   {"SW", strides[1]},
      {"PH", pads->first},  {"PW", pads->second},
      {"DH", dilations[0]}, {"DW", dilations[1]}};
  if (group == ch && k == ch && group > 1) {
    return Result(MakeWorkload("depthwise_conv2d", dims, e.Attrs(site)), nodes);
  }
  dims.push_back({"K", k});
  dims.push_back({"G", group});
  return Result(MakeWorkload("conv2d", dims, e.Attrs(site)), nodes);
}

MatchResult MatchConvTranspose(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  std::optional<Dims> x = g.Shape(n.input(0));
  std::optional<Dims> w = g.Shape(n.input(1));
  std::optional<Dims> y = g.Shape(n.output(0));
  if (!x || !w || !y || x->size() != 4 || w->size() != 4 || y->size() != 4) {
    return NoMatch{"only 2D transposed convolutions with known shapes"};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weights are not constant"};
  std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
  if (!pads) return NoMatch{"asymmetric or automatic padding"};
  const Dims strides = IntsAttr(n, "strides", {1, 1});
  const Dims dilations = IntsAttr(n, "dilations", {1, 1});
  const Dims out_pads = IntsAttr(n, "output_padding", {0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || out_pads.size() != 2) {
    return NoMatch{"strides, dilations or output_padding are not 2D"};
  }
  const int64_t group = IntAttr(n, "group", 1);
  const int64_t k = (*w)[1] * group;
  // The output the contract's formula gives must be the model's (an
  // output_shape attribute may ask for another).
  const int64_t oh = ((*x)[2] - 1) * strides[0] - 2 * pads->first +
                     dilations[0] * ((*w)[2] - 1) + out_pads[0] + 1;
  const int64_t ow = ((*x)[3] - 1) * strides[1] - 2 * pads->second +
                     dilations[1] * ((*w)[3] - 1) + out_pads[1] + 1;
  if ((*y)[1] != k || (*y)[2] != oh || (*y)[3] != ow) {
    return NoMatch{absl::StrCat("output ", (*y)[1], "x", (*y)[2], "x", (*y)[3],
                                " is not the padded ", k, "x", oh, "x", ow)};
  }
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = k;
  site.bias = n.input_size() > 2 && !n.input(2).empty();
  site.residual = false;
  const Epilogue e = FoldEpilogue(g, site, c.covered);
  std::vector<int> nodes = {i};
  nodes.insert(nodes.end(), e.nodes.begin(), e.nodes.end());
  return Result(MakeWorkload("conv_transpose2d",
                             {{"N", (*x)[0]},
                              {"C", (*x)[1]},
                              {"H", (*x)[2]},
                              {"W", (*x)[3]},
                              {"K", k},
                              {"R", (*w)[2]},
                              {"S", (*w)[3]},
                              {"SH", strides[0]},
                              {"SW", strides[1]},
                              {"PH", pads->first},
                              {"PW", pads->second},
                              {"DH", dilations[0]},
                              {"DW", dilations[1]},
                              {"OPH", out_pads[0]},
                              {"OPW", out_pads[1]},
                              {"G", group}},
                             e.Attrs(site)),
                nodes);
}

}  // namespace tunefleet::onnx_import
