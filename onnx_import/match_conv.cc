// Conv -> conv2d / depthwise_conv2d; ConvTranspose -> conv_transpose2d;
// each with its epilogue folded.
#include <variant>

#include "absl/strings/str_cat.h"
#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

// What Conv and ConvTranspose share: the shapes of the input x and the
// (constant) weight w, symmetric pads, 2D strides and dilations, and the
// group.
struct ConvNode {
  Dims x, w;
  std::pair<int64_t, int64_t> pads;
  Dims strides, dilations;
  int64_t group = 1;
};

// Whether every value of `v` is in [lo, templates::kMaxDim].
bool InRange(const Dims& v, int64_t lo) {
  for (int64_t x : v) {
    if (x < lo || x > templates::kMaxDim) return false;
  }
  return true;
}

// Reads node `n` as a 2D convolution of kind `kind` ("convolutions",
// "transposed convolutions": the NoMatch reasons name it), or why not.
std::variant<ConvNode, NoMatch> ReadConvNode(const GraphIndex& g,
                                             const onnx::NodeProto& n,
                                             absl::string_view kind) {
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  std::optional<std::vector<Dims>> shapes = g.Shapes({n.input(0), n.input(1)});
  if (!shapes || (*shapes)[0].size() != 4 || (*shapes)[1].size() != 4) {
    return NoMatch{absl::StrCat("only 2D ", kind, " with known shapes")};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weights are not constant"};
  std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
  if (!pads) return NoMatch{"asymmetric or automatic padding"};
  ConvNode c{(*shapes)[0],
             (*shapes)[1],
             *pads,
             IntsAttr(n, "strides", {1, 1}),
             IntsAttr(n, "dilations", {1, 1}),
             IntAttr(n, "group", 1)};
  if (c.strides.size() != 2 || c.dilations.size() != 2) {
    return NoMatch{"strides or dilations are not 2D"};
  }
  // Bounded before any arithmetic on them (MakeWorkload checks the dims
  // it gets, but products and output sizes come first).
  if (!InRange(c.x, 1) || !InRange(c.w, 1)) {
    return NoMatch{
        absl::StrCat("input or weight dims outside 1..", templates::kMaxDim)};
  }
  if (!InRange(c.strides, 1) || !InRange(c.dilations, 1) ||
      !InRange({c.group}, 1) || !InRange({c.pads.first, c.pads.second}, 0)) {
    return NoMatch{absl::StrCat("strides, dilations, group or pads outside ",
                                "their range (at most ", templates::kMaxDim,
                                ")")};
  }
  return c;
}

// The match of convolution node `i` as `op` with `dims`, its epilogue
// (per output channel of `channels`; `residual`: whether the op has the
// residual attr) folded.
MatchResult FoldedConv(const MatchContext& c, int i, int64_t channels,
                       bool residual, absl::string_view op,
                       std::vector<templates::Dim> dims) {
  const onnx::NodeProto& n = c.g.node(i);
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = channels;
  site.bias = n.input_size() > 2 && !n.input(2).empty();
  site.residual = residual;
  const Epilogue e = FoldEpilogue(c.g, site, c.covered);
  return Result(MakeWorkload(op, std::move(dims), e.Attrs(site)),
                e.Covering(i));
}

}  // namespace

MatchResult MatchConv(const MatchContext& c, int i) {
  const std::variant<ConvNode, NoMatch> read =
      ReadConvNode(c.g, c.g.node(i), "convolutions");
  if (const NoMatch* no = std::get_if<NoMatch>(&read)) return *no;
  const ConvNode& v = std::get<ConvNode>(read);
  const int64_t ch = v.x[1], k = v.w[0];
  // ONNX Conv: weight K x C/G x R x S (both factors <= kMaxDim: no overflow).
  if (v.w[1] * v.group != ch) {
    return NoMatch{absl::StrCat("weight's ", v.w[1], " input channels x group ",
                                v.group, " are not the input's ", ch)};
  }
  std::vector<templates::Dim> dims = {
      {"N", v.x[0]},          {"C", ch},
      {"H", v.x[2]},          {"W", v.x[3]},
      {"R", v.w[2]},          {"S", v.w[3]},
      {"SH", v.strides[0]},   {"SW", v.strides[1]},
      {"PH", v.pads.first},   {"PW", v.pads.second},
      {"DH", v.dilations[0]}, {"DW", v.dilations[1]}};
  if (v.group == ch && k == ch && v.group > 1) {
    return FoldedConv(c, i, k, true, "depthwise_conv2d", std::move(dims));
  }
  dims.push_back({"K", k});
  dims.push_back({"G", v.group});
  return FoldedConv(c, i, k, true, "conv2d", std::move(dims));
}

MatchResult MatchConvTranspose(const MatchContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  const std::variant<ConvNode, NoMatch> read =
      ReadConvNode(c.g, n, "transposed convolutions");
  if (const NoMatch* no = std::get_if<NoMatch>(&read)) return *no;
  const ConvNode& v = std::get<ConvNode>(read);
  const Dims out_pads = IntsAttr(n, "output_padding", {0, 0});
  if (out_pads.size() != 2) return NoMatch{"output_padding is not 2D"};
  if (!InRange(out_pads, 0)) {
    return NoMatch{
        absl::StrCat("output_padding outside 0..", templates::kMaxDim)};
  }
  // ONNX ConvTranspose: weight C x K/G x R x S.
  if (v.w[0] != v.x[1]) {
    return NoMatch{absl::StrCat(
        "weight's ", v.w[0], " input channels are not the input's ", v.x[1])};
  }
  std::optional<Dims> y = c.g.Shape(n.output(0));
  if (!y || y->size() != 4) {
    return NoMatch{"only 2D transposed convolutions with known shapes"};
  }
  // Every term is bounded by kMaxDim (< 2^31): the products and the sums
  // below stay under 2^63.
  const int64_t k = v.w[1] * v.group;
  // The output the contract's formula gives must be the model's (an
  // output_shape attribute may ask for another).
  const int64_t oh = (v.x[2] - 1) * v.strides[0] - 2 * v.pads.first +
                     v.dilations[0] * (v.w[2] - 1) + out_pads[0] + 1;
  const int64_t ow = (v.x[3] - 1) * v.strides[1] - 2 * v.pads.second +
                     v.dilations[1] * (v.w[3] - 1) + out_pads[1] + 1;
  if ((*y)[1] != k || (*y)[2] != oh || (*y)[3] != ow) {
    return NoMatch{absl::StrCat("output ", (*y)[1], "x", (*y)[2], "x", (*y)[3],
                                " is not the padded ", k, "x", oh, "x", ow)};
  }
  return FoldedConv(c, i, k, false, "conv_transpose2d",
                    {{"N", v.x[0]},
                     {"C", v.x[1]},
                     {"H", v.x[2]},
                     {"W", v.x[3]},
                     {"K", k},
                     {"R", v.w[2]},
                     {"S", v.w[3]},
                     {"SH", v.strides[0]},
                     {"SW", v.strides[1]},
                     {"PH", v.pads.first},
                     {"PW", v.pads.second},
                     {"DH", v.dilations[0]},
                     {"DW", v.dilations[1]},
                     {"OPH", out_pads[0]},
                     {"OPW", out_pads[1]},
                     {"G", v.group}});
}

}  // namespace tunefleet::onnx_import
