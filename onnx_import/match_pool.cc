// MaxPool / AveragePool -> pool2d (1-D ones as 2-D with H = 1; padding the
// kernel does not do, in a temporary first: Match::pad); GlobalAveragePool
// / GlobalMaxPool -> global_pool; Softmax -> softmax.
#include <cfloat>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

// With MatchContext::bind: the buffers input (unless padded first) and
// output of a node with one input and one output.
void BindInOut(const MatchContext& c, const onnx::NodeProto& n, bool padded,
               Match& m) {
  if (!c.bind) return;
  m.buffers = {padded ? StepBuffer{} : BindInput(c.g, Input(n, 0), &m.error),
               BindTensor(Output(n, 0))};
}

}  // namespace

MatchResult MatchPool(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || (x->size() != 4 && x->size() != 3)) {
    return NoMatch{"only 1D and 2D pooling of known shape"};
  }
  const int rank = static_cast<int>(x->size());
  Dims x4 = *x;
  if (rank == 3) x4.insert(x4.begin() + 2, 1);  // N x C x 1 x L
  const bool global = absl::StartsWith(n.op_type(), "Global");
  const std::string mode =
      absl::StrContains(n.op_type(), "Max") ? "max" : "avg";
  std::vector<templates::Dim> dims = {
      {"N", x4[0]}, {"C", x4[1]}, {"H", x4[2]}, {"W", x4[3]}};
  if (global) {
    absl::StatusOr<templates::Workload> workload =
        MakeWorkload("global_pool", dims, {{"mode", mode}});
    if (!workload.ok()) {
      return NoMatch{std::string(workload.status().message())};
    }
    Match m{*workload, {i}};
    BindInOut(c, n, false, m);
    return m;
  }
  const size_t spatial = rank - 2;
  auto as2d = [&](Dims v, int64_t value) {
    if (rank == 3) v.insert(v.begin(), value);
    return v;
  };
  const Dims kernel_attr = IntsAttr(n, "kernel_shape", {});
  const Dims strides_attr = IntsAttr(n, "strides", Dims(spatial, 1));
  if (kernel_attr.size() != spatial || strides_attr.size() != spatial) {
    return NoMatch{"kernel_shape or strides are not 2D"};
  }
  if (IntsAttr(n, "dilations", Dims(spatial, 1)) != Dims(spatial, 1)) {
    return NoMatch{"dilation"};
  }
  const Dims kernel = as2d(kernel_attr, 1), strides = as2d(strides_attr, 1);
  for (int64_t v : {kernel[0], kernel[1], strides[0], strides[1]}) {
    if (v < 1 || v > templates::kMaxDim) {
      return NoMatch{"kernel_shape or strides outside 1.." +
                     std::to_string(templates::kMaxDim)};
    }
  }
  const Dims in = {x4[2], x4[3]};
  std::optional<std::pair<Dims, Dims>> pads =
      WindowPads(n, Dims(x->begin() + 2, x->end()), kernel_attr, strides_attr,
                 Dims(spatial, 1));
  if (!pads) return NoMatch{"padding of another form"};
  if (rank == 3) {  // H: no padding
    pads->first.insert(pads->first.begin(), 0);
    pads->second.insert(pads->second.begin(), 0);
  }
  Dims begin = pads->first, end = pads->second;
  const bool include_pad = IntAttr(n, "count_include_pad", 0) != 0;
  // Output dims as shape inference has them (ceil_mode included): the
  // padded input must hold each window.
  std::optional<Dims> y = g.Shape(Output(n, 0));
  if (!y || static_cast<int>(y->size()) != rank) {
    return NoMatch{"output shape unknown"};
  }
  const Dims out = {rank == 3 ? 1 : (*y)[2], (*y)[rank - 1]};
  for (int k = 0; k < 2; ++k) {
    // All terms <= kMaxDim: no overflow.
    const int64_t need = (out[k] - 1) * strides[k] + kernel[k];
    const int64_t extra = need - (in[k] + begin[k] + end[k]);
    if (extra <= 0) continue;
    if (mode == "avg") {
      return NoMatch{"ceil_mode with a partial last window of an average"};
    }
    end[k] += extra;  // ceil_mode: max over what the window holds
  }
  const bool padded = begin != Dims{0, 0} || end != Dims{0, 0};
  std::optional<PrePad> pad;
  if (begin != end || (mode == "avg" && include_pad && padded)) {
    if (mode == "avg" && !include_pad) {
      return NoMatch{
          "asymmetric padding of an average pool with count_include_pad=0"};
    }
    pad = PrePad{Input(n, 0),
                 x4,
                 begin[0],
                 begin[1],
                 end[0],
                 end[1],
                 mode == "max" ? -FLT_MAX : 0.0f};
    dims[2].value += begin[0] + end[0];
    dims[3].value += begin[1] + end[1];
    begin = end = {0, 0};
  }
  dims.insert(dims.end(), {{"R", kernel[0]},
                           {"S", kernel[1]},
                           {"SH", strides[0]},
                           {"SW", strides[1]},
                           {"PH", begin[0]},
                           {"PW", begin[1]}});
  absl::StatusOr<templates::Workload> workload =
      MakeWorkload("pool2d", dims, {{"mode", mode}});
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  // The kernel's output: floor((H + 2 PH - R) / SH) + 1 rows.
  for (int k = 0; k < 2; ++k) {
    const int64_t h = dims[2 + k].value, p = dims[8 + k].value;
    if ((h + 2 * p - kernel[k]) / strides[k] + 1 != out[k]) {
      return NoMatch{absl::StrCat("output ", out[k], " is not the pooled ",
                                  (h + 2 * p - kernel[k]) / strides[k] + 1)};
    }
  }
  Match m{*workload, {i}};
  BindInOut(c, n, pad.has_value(), m);
  m.pad = std::move(pad);
  return m;
}

MatchResult MatchSoftmax(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const int64_t opset = c.opset;
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || x->empty()) return NoMatch{"input shape unknown"};
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis = IntAttr(n, "axis", opset >= 13 ? -1 : 1);
  if (axis < -rank || axis > rank) return NoMatch{"axis out of range"};
  if (axis < 0) axis += rank;
  // Before opset 13, Softmax flattens dims from `axis` on into one row;
  // from opset 13 it normalises along `axis` alone, which is our op only
  // when that is the last axis.
  if (opset >= 13 && axis != rank - 1) {
    return NoMatch{"softmax over an axis other than the last"};
  }
  std::optional<int64_t> rows = Product(*x, 0, static_cast<size_t>(axis));
  std::optional<int64_t> row =
      Product(*x, static_cast<size_t>(axis), x->size());
  if (!rows || !row) return NoMatch{"shape too large"};
  absl::StatusOr<templates::Workload> workload =
      MakeWorkload("softmax", {{"N", *rows}, {"D", *row}});
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  Match m{*workload, {i}};
  BindInOut(c, n, false, m);
  return m;
}

}  // namespace tunefleet::onnx_import
