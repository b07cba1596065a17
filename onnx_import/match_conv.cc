// Conv -> conv2d / depthwise_conv2d; ConvTranspose -> conv_transpose2d;
// each with its epilogue folded. 1-D ones (N x C x L) run as 2-D with
// H = 1; a Conv with asymmetric or automatic padding reads its input
// padded into a temporary first (Match::pad) and pads no more itself.
#include <variant>

#include "absl/strings/str_cat.h"
#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

// What Conv and ConvTranspose share: the shapes of the input x and the
// (constant) weight w as 2-D ones (a 1-D node's with H = 1 and R = 1), the
// padding at the begin and end of H and W, 2D strides and dilations, and
// the group.
struct ConvNode {
  Dims x, w;
  Dims pad_begin, pad_end;
  Dims strides, dilations;
  int64_t group = 1;
  int rank = 4;  // of the node's input and output
};

// Whether every value of `v` is in [lo, templates::kMaxDim].
bool InRange(const Dims& v, int64_t lo) {
  for (int64_t x : v) {
    if (x < lo || x > templates::kMaxDim) return false;
  }
  return true;
}

// `v` of a 1-D node with `value` put first (its H), as 2-D.
Dims As2d(Dims v, int rank, int64_t value) {
  if (rank == 3) v.insert(v.begin(), value);
  return v;
}

// Reads node `n` as a 2D (or 1-D) convolution of kind `kind`
// ("convolutions", "transposed convolutions": the NoMatch reasons name
// it), or why not. `transposed`: ConvTranspose, whose padding must be
// symmetric.
std::variant<ConvNode, NoMatch> ReadConvNode(const GraphIndex& g,
                                             const onnx::NodeProto& n,
                                             absl::string_view kind,
                                             bool transposed) {
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  std::optional<std::vector<Dims>> shapes = g.Shapes({n.input(0), n.input(1)});
  if (!shapes || (*shapes)[0].size() != (*shapes)[1].size() ||
      ((*shapes)[0].size() != 4 && (*shapes)[0].size() != 3)) {
    return NoMatch{absl::StrCat("only 1D and 2D ", kind, " with known shapes")};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weights are not constant"};
  ConvNode c;
  c.rank = static_cast<int>((*shapes)[0].size());
  const size_t spatial = c.rank - 2;
  c.x = (*shapes)[0];
  c.w = (*shapes)[1];
  if (c.rank == 3) {  // N x C x L as N x C x 1 x L, K x C/G x S likewise
    c.x.insert(c.x.begin() + 2, 1);
    c.w.insert(c.w.begin() + 2, 1);
  }
  const Dims strides = IntsAttr(n, "strides", Dims(spatial, 1));
  const Dims dilations = IntsAttr(n, "dilations", Dims(spatial, 1));
  if (strides.size() != spatial || dilations.size() != spatial) {
    return NoMatch{"strides or dilations are not 2D"};
  }
  c.strides = As2d(strides, c.rank, 1);
  c.dilations = As2d(dilations, c.rank, 1);
  c.group = IntAttr(n, "group", 1);
  // Bounded before any arithmetic on them (MakeWorkload checks the dims
  // it gets, but products and output sizes come first).
  if (!InRange(c.x, 1) || !InRange(c.w, 1)) {
    return NoMatch{
        absl::StrCat("input or weight dims outside 1..", templates::kMaxDim)};
  }
  if (!InRange(c.strides, 1) || !InRange(c.dilations, 1) ||
      !InRange({c.group}, 1)) {
    return NoMatch{absl::StrCat("strides, dilations, group or pads outside ",
                                "their range (at most ", templates::kMaxDim,
                                ")")};
  }
  if (transposed) {
    const Dims pads = IntsAttr(n, "pads", Dims(2 * spatial, 0));
    const std::string auto_pad = StringAttr(n, "auto_pad");
    if (pads.size() != 2 * spatial ||
        !std::equal(pads.begin(), pads.begin() + spatial,
                    pads.begin() + spatial) ||
        (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "VALID")) {
      return NoMatch{"asymmetric or automatic padding"};
    }
    if (!InRange(pads, 0)) {
      return NoMatch{absl::StrCat("strides, dilations, group or pads outside ",
                                  "their range (at most ", templates::kMaxDim,
                                  ")")};
    }
    c.pad_begin = As2d(Dims(pads.begin(), pads.begin() + spatial), c.rank, 0);
    c.pad_end = c.pad_begin;
    return c;
  }
  // The node's own spatial dims (1 or 2) for its pads.
  const Dims in((*shapes)[0].begin() + 2, (*shapes)[0].end());
  const Dims kernel((*shapes)[1].begin() + 2, (*shapes)[1].end());
  std::optional<std::pair<Dims, Dims>> pads =
      WindowPads(n, in, kernel, strides, dilations);
  if (pads && c.rank == 3) {  // H: no padding
    pads->first.insert(pads->first.begin(), 0);
    pads->second.insert(pads->second.begin(), 0);
  }
  if (!pads) {
    const Dims raw = IntsAttr(n, "pads", {});
    if (!InRange(raw, 0)) {
      return NoMatch{absl::StrCat("strides, dilations, group or pads outside ",
                                  "their range (at most ", templates::kMaxDim,
                                  ")")};
    }
    return NoMatch{"padding of another form (auto_pad " +
                   StringAttr(n, "auto_pad") + ")"};
  }
  c.pad_begin = pads->first;
  c.pad_end = pads->second;
  return c;
}

// The epilogue site of convolution node `n` with `channels` outputs.
EpilogueSite ConvSite(const onnx::NodeProto& n, int64_t channels, int rank,
                      bool residual) {
  EpilogueSite site;
  site.out = n.output(0);
  site.channels = channels;
  site.rank = rank;
  site.bias = n.input_size() > 2 && !n.input(2).empty();
  if (site.bias) site.bias_name = n.input(2);
  site.residual = residual;
  return site;
}

// The match of convolution node `i` as `op` with `dims`, its epilogue
// (per output channel of `channels`; `residual`: whether the op has the
// residual attr) folded, and with MatchContext::bind its buffers: input
// (or the padded one, `pad`), weight as the model stores it (conv OIHW,
// conv_transpose C x K/G x R x S: the templates read those), output,
// scale, shift and, for ops with a residual, the residual.
MatchResult FoldedConv(const MatchContext& c, int i, const ConvNode& v,
                       int64_t channels, bool residual, absl::string_view op,
                       std::vector<templates::Dim> dims,
                       std::optional<PrePad> pad) {
  const onnx::NodeProto& n = c.g.node(i);
  const EpilogueSite site = ConvSite(n, channels, v.rank, residual);
  const Epilogue e = FoldEpilogue(c.g, site, c.covered);
  MatchResult r =
      Result(MakeWorkload(op, std::move(dims), e.Attrs(site)), e.Covering(i));
  Match* m = std::get_if<Match>(&r);
  if (m == nullptr || !c.bind) return r;
  m->error = e.error;
  m->buffers.push_back(pad ? StepBuffer{}
                           : BindInput(c.g, n.input(0), &m->error));
  m->buffers.push_back(BindInput(c.g, n.input(1), &m->error));
  BindEpilogue(c.g, e, residual, m);
  m->pad = std::move(pad);
  return r;
}

}  // namespace

MatchResult MatchConv(const MatchContext& c, int i) {
  const std::variant<ConvNode, NoMatch> read =
      ReadConvNode(c.g, c.g.node(i), "convolutions", false);
  if (const NoMatch* no = std::get_if<NoMatch>(&read)) return *no;
  const ConvNode& v = std::get<ConvNode>(read);
  const int64_t ch = v.x[1], k = v.w[0];
  // ONNX Conv: weight K x C/G x R x S (both factors <= kMaxDim: no overflow).
  if (v.w[1] * v.group != ch) {
    return NoMatch{absl::StrCat("weight's ", v.w[1], " input channels x group ",
                                v.group, " are not the input's ", ch)};
  }
  // Symmetric padding is the kernel's own; any other pads the input into
  // a temporary first (zeros: the convolution's padding value).
  std::optional<PrePad> pad;
  int64_t h = v.x[2], w = v.x[3], ph = v.pad_begin[0], pw = v.pad_begin[1];
  if (v.pad_begin != v.pad_end) {
    pad = PrePad{
        c.g.node(i).input(0), v.x, v.pad_begin[0], v.pad_begin[1], v.pad_end[0],
        v.pad_end[1],         0.0f};
    h += v.pad_begin[0] + v.pad_end[0];
    w += v.pad_begin[1] + v.pad_end[1];
    ph = pw = 0;
  }
  std::vector<templates::Dim> dims = {{"N", v.x[0]},
                                      {"C", ch},
                                      {"H", h},
                                      {"W", w},
                                      {"R", v.w[2]},
                                      {"S", v.w[3]},
                                      {"SH", v.strides[0]},
                                      {"SW", v.strides[1]},
                                      {"PH", ph},
                                      {"PW", pw},
                                      {"DH", v.dilations[0]},
                                      {"DW", v.dilations[1]}};
  if (v.group == ch && k == ch && v.group > 1) {
    return FoldedConv(c, i, v, k, true, "depthwise_conv2d", std::move(dims),
                      std::move(pad));
  }
  dims.push_back({"K", k});
  dims.push_back({"G", v.group});
  return FoldedConv(c, i, v, k, true, "conv2d", std::move(dims),
                    std::move(pad));
}

MatchResult MatchConvTranspose(const MatchContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  const std::variant<ConvNode, NoMatch> read =
      ReadConvNode(c.g, n, "transposed convolutions", true);
  if (const NoMatch* no = std::get_if<NoMatch>(&read)) return *no;
  const ConvNode& v = std::get<ConvNode>(read);
  const Dims raw_out_pads = IntsAttr(n, "output_padding", Dims(v.rank - 2, 0));
  if (raw_out_pads.size() != static_cast<size_t>(v.rank - 2)) {
    return NoMatch{"output_padding is not 2D"};
  }
  if (!InRange(raw_out_pads, 0)) {
    return NoMatch{
        absl::StrCat("output_padding outside 0..", templates::kMaxDim)};
  }
  const Dims out_pads = As2d(raw_out_pads, v.rank, 0);
  // ONNX ConvTranspose: weight C x K/G x R x S.
  if (v.w[0] != v.x[1]) {
    return NoMatch{absl::StrCat(
        "weight's ", v.w[0], " input channels are not the input's ", v.x[1])};
  }
  std::optional<Dims> y = c.g.Shape(n.output(0));
  if (!y || static_cast<int>(y->size()) != v.rank) {
    return NoMatch{"only 2D transposed convolutions with known shapes"};
  }
  const Dims y2 = v.rank == 3 ? Dims{(*y)[0], (*y)[1], 1, (*y)[2]} : *y;
  // Every term is bounded by kMaxDim (< 2^31): the products and the sums
  // below stay under 2^63.
  const int64_t k = v.w[1] * v.group;
  // The output the contract's formula gives must be the model's (an
  // output_shape attribute may ask for another).
  const int64_t oh = (v.x[2] - 1) * v.strides[0] - 2 * v.pad_begin[0] +
                     v.dilations[0] * (v.w[2] - 1) + out_pads[0] + 1;
  const int64_t ow = (v.x[3] - 1) * v.strides[1] - 2 * v.pad_begin[1] +
                     v.dilations[1] * (v.w[3] - 1) + out_pads[1] + 1;
  if (y2[1] != k || y2[2] != oh || y2[3] != ow) {
    return NoMatch{absl::StrCat("output ", y2[1], "x", y2[2], "x", y2[3],
                                " is not the padded ", k, "x", oh, "x", ow)};
  }
  return FoldedConv(c, i, v, k, false, "conv_transpose2d",
                    {{"N", v.x[0]},
                     {"C", v.x[1]},
                     {"H", v.x[2]},
                     {"W", v.x[3]},
                     {"K", k},
                     {"R", v.w[2]},
                     {"S", v.w[3]},
                     {"SH", v.strides[0]},
                     {"SW", v.strides[1]},
                     {"PH", v.pad_begin[0]},
                     {"PW", v.pad_begin[1]},
                     {"DH", v.dilations[0]},
                     {"DW", v.dilations[1]},
                     {"OPH", out_pads[0]},
                     {"OPW", out_pads[1]},
                     {"G", v.group}},
                    std::nullopt);
}

}  // namespace tunefleet::onnx_import
