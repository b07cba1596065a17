// Resize (opset 10+) and Upsample -> resize: 2D on N x C x H x W, nearest
// or (bi)linear, ONNX's coordinate transformations and nearest rounding.
#include <cmath>
#include <optional>
#include <vector>

#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

// The `scales` attribute (floats) of an Upsample of opset 7 / 8, or
// nullopt when the node has none.
std::optional<std::vector<double>> ScalesAttr(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "scales") {
      return std::vector<double>(a.floats().begin(), a.floats().end());
    }
  }
  return std::nullopt;
}

}  // namespace

MatchResult MatchResize(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  std::optional<std::vector<Dims>> shapes =
      g.Shapes({Input(n, 0), Output(n, 0)});
  if (!shapes) return NoMatch{"input or output shape unknown"};
  const Dims& x = (*shapes)[0];
  const Dims& y = (*shapes)[1];
  if (x.size() != 4 || y.size() != 4 || x[0] != y[0] || x[1] != y[1]) {
    return NoMatch{"only resizes of H and W of a 4D tensor"};
  }
  std::string mode = StringAttr(n, "mode");
  if (mode.empty()) mode = "nearest";
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") {
    return NoMatch{"mode " + mode + " (only nearest and linear)"};
  }
  // Before opset 11 (and in Upsample) the transformation is asymmetric and
  // nearest rounds down (of upsampling; ONNX Runtime's "simple" mode).
  const bool old = n.op_type() == "Upsample" || c.opset < 11;
  std::string coord = "asymmetric", round = "floor";
  std::string scales_input = Input(n, 1);
  if (!old) {
    scales_input = Input(n, 2);
    coord = StringAttr(n, "coordinate_transformation_mode");
    if (coord.empty()) coord = "half_pixel";
    round = StringAttr(n, "nearest_mode");
    if (round.empty()) round = "round_prefer_floor";
    if (IntAttr(n, "antialias", 0) != 0 || HasAttr(n, "axes") ||
        (HasAttr(n, "keep_aspect_ratio_policy") &&
         StringAttr(n, "keep_aspect_ratio_policy") != "stretch")) {
      return NoMatch{"antialias, axes or keep_aspect_ratio_policy"};
    }
  } else if (y[2] < x[2] || y[3] < x[3]) {
    return NoMatch{"downsampling in an opset-10 Resize or Upsample"};
  }
  if (mode == "linear") round = "round_prefer_floor";  // unused: the default
  // Scales given must be OH / H and OW / W, the kernel's: from the scales
  // input, or the scales attribute of Upsample before opset 9.
  std::optional<std::vector<double>> scales;
  if (!scales_input.empty()) {
    if (std::optional<TensorValue> s = g.Value(scales_input)) {
      scales.emplace();
      for (int64_t k = 0; k < s->size(); ++k) scales->push_back(s->at(k));
    }
  } else if (n.op_type() == "Upsample") {
    scales = ScalesAttr(n);
  }
  if (scales && scales->size() == 4) {
    const double want[4] = {1, 1, static_cast<double>(y[2]) / x[2],
                            static_cast<double>(y[3]) / x[3]};
    for (int k = 0; k < 4; ++k) {
      if (!(std::fabs((*scales)[k] - want[k]) <= 1e-6 * want[k])) {
        return NoMatch{"scales other than output / input dims"};
      }
    }
  } else if (scales && !scales->empty()) {
    return NoMatch{"scales not of 4 dims"};
  }
  MatchResult r =
      Result(MakeWorkload("resize",
                          {{"N", x[0]},
                           {"C", x[1]},
                           {"H", x[2]},
                           {"W", x[3]},
                           {"OH", y[2]},
                           {"OW", y[3]}},
                          {{"mode", mode}, {"coord", coord}, {"round", round}}),
             {i});
  if (Match* m = std::get_if<Match>(&r); m != nullptr && c.bind) {
    m->buffers = {BindInput(g, Input(n, 0), &m->error),
                  BindTensor(Output(n, 0))};
  }
  return r;
}

}  // namespace tunefleet::onnx_import
