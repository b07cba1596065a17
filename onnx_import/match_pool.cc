// MaxPool / AveragePool -> pool2d; GlobalAveragePool / GlobalMaxPool ->
// global_pool; Softmax -> softmax.
#include "absl/strings/match.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {

MatchResult MatchPool(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || x->size() != 4) return NoMatch{"only 2D pooling of known shape"};
  const bool global = absl::StartsWith(n.op_type(), "Global");
  const std::string mode =
      absl::StrContains(n.op_type(), "Max") ? "max" : "avg";
  std::vector<templates::Dim> dims = {
      {"N", (*x)[0]}, {"C", (*x)[1]}, {"H", (*x)[2]}, {"W", (*x)[3]}};
  absl::StatusOr<templates::Workload> workload;
  if (global) {
    workload = MakeWorkload("global_pool", dims, {{"mode", mode}});
  } else {
    std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
    if (!pads || IntAttr(n, "ceil_mode", 0) != 0 ||
        IntAttr(n, "count_include_pad", 0) != 0 ||
        IntsAttr(n, "dilations", {1, 1}) != Dims{1, 1}) {
      return NoMatch{
          "asymmetric padding, ceil_mode, count_include_pad or dilation"};
    }
    const Dims kernel = IntsAttr(n, "kernel_shape", {});
    const Dims strides = IntsAttr(n, "strides", {1, 1});
    if (kernel.size() != 2 || strides.size() != 2) {
      return NoMatch{"kernel_shape or strides are not 2D"};
    }
    dims.insert(dims.end(), {{"R", kernel[0]},
                             {"S", kernel[1]},
                             {"SH", strides[0]},
                             {"SW", strides[1]},
                             {"PH", pads->first},
                             {"PW", pads->second}});
    workload = MakeWorkload("pool2d", dims, {{"mode", mode}});
  }
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  return Match{*workload, {i}};
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
  return Match{*workload, {i}};
}

}  // namespace tunefleet::onnx_import
