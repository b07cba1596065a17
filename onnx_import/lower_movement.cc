// Data movement lowered to `copy` and `fill` steps: Transpose, Slice,
// Concat, Split, Pad, Gather with constant indices, Expand, Tile,
// DepthToSpace, SpaceToDepth and ConstantOfShape (lowering.h).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "onnx_import/lowering.h"
#include "onnx_import/match.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {
namespace {

// The integer values of constant input `name`, or nullopt.
std::optional<Dims> ConstInts(const GraphIndex& g, const std::string& name) {
  std::optional<TensorValue> v = g.Value(name);
  if (!v || v->is_float()) return std::nullopt;
  return v->ints;
}

// The shapes of `n`'s first input (x) and first output (y).
struct InOut {
  Dims x, y;
};
absl::StatusOr<InOut> InOutShapes(const LowerContext& c,
                                  const onnx::NodeProto& n) {
  absl::StatusOr<Dims> x = c.w.ShapeOf(Input(n, 0));
  if (!x.ok()) return x.status();
  absl::StatusOr<Dims> y = c.w.ShapeOf(Output(n, 0));
  if (!y.ok()) return y.status();
  return InOut{*std::move(x), *std::move(y)};
}

// The copies of `boxes` from `in` (of `in_dims`) to `out` (of `out_dims`).
absl::Status WriteBoxes(StepWriter& w, const std::string& in,
                        const Dims& in_dims, const std::string& out,
                        const Dims& out_dims,
                        const std::vector<CopyBox>& boxes) {
  if (static_cast<int>(boxes.size()) > kMaxStepsPerNode) {
    return Refuse(absl::StrCat("it needs ", boxes.size(), " copies (at most ",
                               kMaxStepsPerNode, ")"));
  }
  absl::StatusOr<StepBuffer> b = w.In(in);
  if (!b.ok()) return b.status();
  for (const CopyBox& box : boxes) {
    if (absl::Status s =
            w.Copy(*b, ElementsOf(in_dims), out, ElementsOf(out_dims), box);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// One segment of an output axis: `extent` output positions from
// `out_start` read input positions from `in_start` with step `in_step`
// (0: the same position each; an edge Pad's border).
struct Segment {
  int64_t out_start, extent, in_start, in_step;
};

// The boxes of the product of per-axis segment lists.
std::vector<CopyBox> Boxes(const std::vector<std::vector<Segment>>& axes,
                           const Dims& is, const Dims& os) {
  std::vector<CopyBox> boxes(1);
  for (size_t k = 0; k < axes.size(); ++k) {
    std::vector<CopyBox> next;
    for (const CopyBox& b : boxes) {
      for (const Segment& s : axes[k]) {
        if (s.extent <= 0) continue;
        CopyBox n = b;
        n.dims.push_back({s.extent, s.in_step * is[k], os[k]});
        n.in_offset += s.in_start * is[k];
        n.out_offset += s.out_start * os[k];
        next.push_back(std::move(n));
      }
    }
    boxes = std::move(next);
    if (boxes.size() > static_cast<size_t>(kMaxStepsPerNode) + 1) break;
  }
  return boxes;
}

absl::Status LowerTranspose(LowerContext& c, const onnx::NodeProto& n) {
  absl::StatusOr<Dims> x = c.w.ShapeOf(Input(n, 0));
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->size());
  const std::optional<Dims> perm = TransposePerm(n, rank);
  if (!perm) return Refuse("perm is not a permutation of the input's axes");
  return WriteTranspose(c.w, Input(n, 0), *x, *perm, Output(n, 0));
}

// Slice with positive steps as one strided copy; a negative step copies
// each element of its axis on its own (at most kMaxStepsPerNode copies).
absl::Status LowerSlice(LowerContext& c, const onnx::NodeProto& n) {
  TUNEFLEET_ASSIGN_OR_RETURN(const InOut shapes, InOutShapes(c, n));
  const auto& [x, y] = shapes;
  const int64_t rank = static_cast<int64_t>(x.size());
  Dims starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = IntsAttr(n, "starts", {});
    ends = IntsAttr(n, "ends", {});
    axes = IntsAttr(n, "axes", {});
  } else {
    Dims* args[4] = {&starts, &ends, &axes, &steps};
    for (int k = 0; k < 4; ++k) {
      if (Input(n, k + 1).empty()) continue;
      std::optional<Dims> v = ConstInts(c.g, Input(n, k + 1));
      if (!v) return Refuse("starts, ends, axes or steps are not constant");
      *args[k] = *v;
    }
  }
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(k);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return Refuse("starts, ends, axes and steps differ in length");
  }
  Dims begin(rank, 0), step(rank, 1);
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = NormalizeAxis(axes[k], rank);
    if (a < 0 || steps[k] == 0) return Refuse("an axis or step out of range");
    const int64_t d = x[a];
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -d ? lo : v + d;
      return std::clamp(v, lo, hi);
    };
    step[a] = std::clamp(steps[k], -(d + 1), d + 1);
    begin[a] =
        step[a] > 0 ? clamp(starts[k], 0, d) : clamp(starts[k], 0, d - 1);
  }
  if (static_cast<int64_t>(y.size()) != rank) {
    return Refuse("output rank differs from the input's");
  }
  const Dims is = RowMajorStrides(x), os = RowMajorStrides(y);
  std::vector<std::vector<Segment>> segments(rank);
  for (int64_t a = 0; a < rank; ++a) {
    if (step[a] > 0 || y[a] == 1) {
      segments[a].push_back({0, y[a], begin[a], std::max<int64_t>(step[a], 1)});
      continue;
    }
    for (int64_t j = 0; j < y[a]; ++j) {
      segments[a].push_back({j, 1, begin[a] + j * step[a], 1});
    }
  }
  return WriteBoxes(c.w, Input(n, 0), x, Output(n, 0), y,
                    Boxes(segments, is, os));
}

// Concat (the inputs into the output) and Split (the input into the
// outputs), one copy per part: the parts (empty names skipped) lie end to
// end along `axis` of the whole, the output of Concat or the input of Split.
absl::Status LowerConcatSplit(LowerContext& c, const onnx::NodeProto& n,
                              bool split) {
  const std::string& whole = split ? Input(n, 0) : Output(n, 0);
  absl::StatusOr<Dims> w = c.w.ShapeOf(whole);
  if (!w.ok()) return w.status();
  const int64_t rank = static_cast<int64_t>(w->size());
  const int64_t axis = NormalizeAxis(IntAttr(n, "axis", 0), rank);
  if (axis < 0) return Refuse("axis out of range");
  const Dims ws = RowMajorStrides(*w);
  int64_t at = 0;
  for (const std::string& part : split ? n.output() : n.input()) {
    if (part.empty()) continue;
    absl::StatusOr<Dims> p = c.w.ShapeOf(part);
    if (!p.ok()) return p.status();
    if (static_cast<int64_t>(p->size()) != rank) {
      return Refuse(split ? "outputs of another rank"
                          : "inputs of different ranks");
    }
    if (!split && (*p)[axis] == 0) continue;
    const Dims ps = RowMajorStrides(*p);
    CopyBox box;
    for (int64_t k = 0; k < rank; ++k) {
      box.dims.push_back(
          {(*p)[k], split ? ws[k] : ps[k], split ? ps[k] : ws[k]});
    }
    (split ? box.in_offset : box.out_offset) = at * ws[axis];
    at += (*p)[axis];
    if (split && at > (*w)[axis]) {
      return Refuse("outputs larger than the input");
    }
    if (absl::Status s = split ? WriteBoxes(c.w, whole, *w, part, *p, {box})
                               : WriteBoxes(c.w, part, *p, whole, *w, {box});
        !s.ok()) {
      return s;
    }
  }
  if (!split && at != (*w)[axis]) {
    return Refuse("inputs do not fill the output");
  }
  return absl::OkStatus();
}

// Pad: constant (a fill, then the input copied into its place), edge (the
// border copied from the edge with stride 0) and reflect (the border one
// slab at a time); negative pads crop.
absl::Status LowerPad(LowerContext& c, const onnx::NodeProto& n) {
  TUNEFLEET_ASSIGN_OR_RETURN(const InOut shapes, InOutShapes(c, n));
  const auto& [x, y] = shapes;
  const int64_t rank = static_cast<int64_t>(x.size());
  std::string mode = StringAttr(n, "mode");
  if (mode.empty()) mode = "constant";
  Dims pads;
  double value = 0;
  if (c.opset < 11) {
    pads = IntsAttr(n, "pads", {});
    value = FloatAttr(n, "value", 0);
  } else {
    std::optional<Dims> p = ConstInts(c.g, Input(n, 1));
    if (!p) return Refuse("pads are not constant");
    pads = *p;
    if (!Input(n, 2).empty()) {
      std::optional<double> v = c.g.Scalar(Input(n, 2));
      if (!v) return Refuse("constant_value is not a constant");
      value = *v;
    }
    if (!Input(n, 3).empty()) {  // axes (opset 18): pads of those only
      std::optional<Dims> axes = ConstInts(c.g, Input(n, 3));
      if (!axes || 2 * axes->size() != pads.size()) {
        return Refuse("axes are not constant or not half the pads");
      }
      Dims full(2 * rank, 0);
      for (size_t k = 0; k < axes->size(); ++k) {
        const int64_t a = NormalizeAxis((*axes)[k], rank);
        if (a < 0) return Refuse("an axis out of range");
        full[a] = pads[k];
        full[rank + a] = pads[axes->size() + k];
      }
      pads = full;
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    return Refuse("pads are not two per axis");
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    return Refuse("mode " + mode + " (constant, edge and reflect run)");
  }
  std::vector<std::vector<Segment>> segments(rank);
  bool border = false;
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t d = x[a], pb = pads[a], pe = pads[rank + a];
    if (std::abs(pb) > templates::kMaxDim ||
        std::abs(pe) > templates::kMaxDim) {
      return Refuse("pads out of range");
    }
    if (d + pb + pe != y[a]) return Refuse("output dims are not the padded");
    const int64_t skip_b = std::max<int64_t>(-pb, 0),
                  skip_e = std::max<int64_t>(-pe, 0);
    const int64_t inner = d - skip_b - skip_e;
    segments[a].push_back({std::max<int64_t>(pb, 0), inner, skip_b, 1});
    if (pb > 0 || pe > 0) border = true;
    const int64_t end = std::max<int64_t>(pb, 0) + inner;  // the end border
    if (mode == "edge") {
      if (pb > 0) segments[a].push_back({0, pb, 0, 0});
      if (pe > 0) segments[a].push_back({end, pe, d - 1, 0});
    } else if (mode == "reflect") {
      if (pb >= d || pe >= d) return Refuse("reflect pads of the whole axis");
      for (int64_t j = 0; j < pb; ++j) segments[a].push_back({j, 1, pb - j, 1});
      for (int64_t j = 0; j < pe; ++j) {
        segments[a].push_back({end + j, 1, d - 2 - j, 1});
      }
    }
  }
  const int64_t total = ElementsOf(y);
  if (mode == "constant" && border) {
    if (absl::Status s =
            c.w.Fill(Output(n, 0), total, 0, total, static_cast<float>(value));
        !s.ok()) {
      return s;
    }
  }
  return WriteBoxes(c.w, Input(n, 0), x, Output(n, 0), y,
                    Boxes(segments, RowMajorStrides(x), RowMajorStrides(y)));
}

// Gather of a computed tensor at constant indices: one copy per run of
// indices in arithmetic progression.
absl::Status LowerGather(LowerContext& c, const onnx::NodeProto& n) {
  absl::StatusOr<Dims> x = c.w.ShapeOf(Input(n, 0));
  if (!x.ok()) return x.status();
  std::optional<TensorValue> idx = c.g.Value(Input(n, 1));
  if (!idx || idx->is_float()) {
    return Refuse("indices are not constant (computed indices do not run)");
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t axis = NormalizeAxis(IntAttr(n, "axis", 0), rank);
  if (axis < 0) return Refuse("axis out of range");
  const int64_t d = (*x)[axis];
  Dims ids = idx->ints;
  for (int64_t& v : ids) {
    if (v < -d || v >= d) return Refuse("an index out of range");
    if (v < 0) v += d;
  }
  Dims out_dims(x->begin(), x->begin() + axis);
  out_dims.insert(out_dims.end(), idx->dims.begin(), idx->dims.end());
  out_dims.insert(out_dims.end(), x->begin() + axis + 1, x->end());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= (*x)[k];
  for (int64_t k = axis + 1; k < rank; ++k) inner *= (*x)[k];
  const int64_t count = static_cast<int64_t>(ids.size());
  std::vector<CopyBox> boxes;
  for (int64_t start = 0; start < count;) {
    int64_t len = 1, step = 0;
    if (start + 1 < count && ids[start + 1] >= ids[start]) {
      step = ids[start + 1] - ids[start];
      while (start + len < count &&
             ids[start + len] == ids[start] + len * step) {
        ++len;
      }
    }
    CopyBox box;
    box.dims = {{outer, d * inner, SaturatingMul(count, inner)},
                {len, step * inner, inner},
                {inner, 1, 1}};
    box.in_offset = ids[start] * inner;
    box.out_offset = start * inner;
    boxes.push_back(box);
    start += len;
  }
  return WriteBoxes(c.w, Input(n, 0), *x, Output(n, 0), out_dims, boxes);
}

absl::Status LowerExpand(LowerContext& c, const onnx::NodeProto& n) {
  TUNEFLEET_ASSIGN_OR_RETURN(const InOut shapes, InOutShapes(c, n));
  const auto& [x, y] = shapes;
  if (x.size() > y.size()) return Refuse("output of a lower rank");
  const size_t lead = y.size() - x.size();
  const Dims is = RowMajorStrides(x), os = RowMajorStrides(y);
  CopyBox box;
  for (size_t k = 0; k < y.size(); ++k) {
    int64_t stride = 0;
    if (k >= lead && x[k - lead] != 1) {
      if (x[k - lead] != y[k]) return Refuse("dims do not broadcast");
      stride = is[k - lead];
    }
    box.dims.push_back({y[k], stride, os[k]});
  }
  return WriteBoxes(c.w, Input(n, 0), x, Output(n, 0), y, {box});
}

// Tile: output index r * d + i along each axis: two box dims per axis.
absl::Status LowerTile(LowerContext& c, const onnx::NodeProto& n) {
  TUNEFLEET_ASSIGN_OR_RETURN(const InOut shapes, InOutShapes(c, n));
  const auto& [x, y] = shapes;
  if (x.size() != y.size()) return Refuse("output of another rank");
  const Dims is = RowMajorStrides(x), os = RowMajorStrides(y);
  CopyBox box;
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k] == 0 || y[k] % x[k] != 0) {
      return Refuse("output dims are not multiples of the input's");
    }
    box.dims.push_back({y[k] / x[k], 0, x[k] * os[k]});
    box.dims.push_back({x[k], is[k], os[k]});
  }
  return WriteBoxes(c.w, Input(n, 0), x, Output(n, 0), y, {box});
}

// DepthToSpace (DCR or CRD) and SpaceToDepth of N x C x H x W with block b:
// one copy of six dims.
absl::Status LowerDepthSpace(LowerContext& c, const onnx::NodeProto& n) {
  TUNEFLEET_ASSIGN_OR_RETURN(const InOut shapes, InOutShapes(c, n));
  const auto& [x, y] = shapes;
  if (x.size() != 4 || y.size() != 4) return Refuse("only 4D tensors");
  const int64_t b = IntAttr(n, "blocksize", 0);
  if (b < 1 || b > templates::kMaxDim) return Refuse("blocksize out of range");
  const int64_t N = x[0], C = x[1], H = x[2], W = x[3];
  CopyBox box;
  if (n.op_type() == "DepthToSpace") {
    if (C % (b * b) != 0) return Refuse("channels not a multiple of b * b");
    const int64_t c2 = C / (b * b), hw = H * W;
    const bool crd = StringAttr(n, "mode") == "CRD";
    const int64_t ob = W * b;  // output row
    // Output (n, c2, h, i, w, j) at ((n * c2 + c) * H * b + h * b + i) * W * b
    // + w * b + j; input channel DCR (i * b + j) * c2 + c, CRD c * b * b + i
    // * b + j.
    box.dims = {{N, C * hw, c2 * hw * b * b},
                {c2, (crd ? b * b : 1) * hw, hw * b * b},
                {H, W, b * ob},
                {b, (crd ? b : b * c2) * hw, ob},
                {W, 1, b},
                {b, (crd ? 1 : c2) * hw, 1}};
  } else {
    if (H % b != 0 || W % b != 0) return Refuse("H or W not a multiple of b");
    const int64_t h2 = H / b, w2 = W / b, hw2 = h2 * w2;
    // Output channel (i * b + j) * C + c at (h, w) reads input (c, h * b +
    // i, w * b + j).
    box.dims = {{N, C * H * W, C * b * b * hw2},
                {b, W, b * C * hw2},
                {b, 1, C * hw2},
                {C, H * W, hw2},
                {h2, b * W, w2},
                {w2, b, 1}};
  }
  return WriteBoxes(c.w, Input(n, 0), x, Output(n, 0), y, {box});
}

absl::Status LowerConstantOfShape(LowerContext& c, const onnx::NodeProto& n) {
  absl::StatusOr<Dims> y = c.w.ShapeOf(Output(n, 0));
  if (!y.ok()) return y.status();
  double value = 0;
  for (const auto& a : n.attribute()) {
    if (a.name() != "value") continue;
    std::optional<TensorValue> v = ReadTensor(a.t(), 1);
    if (!v || v->size() != 1) return Refuse("value is not one readable number");
    if (!v->is_float()) return Refuse("an integer tensor at run time");
    value = v->at(0);
  }
  const int64_t total = ElementsOf(*y);
  return c.w.Fill(Output(n, 0), total, 0, total, static_cast<float>(value));
}

}  // namespace

absl::Status LowerMovement(LowerContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  const std::string& op = n.op_type();
  if (op == "Transpose") return LowerTranspose(c, n);
  if (op == "Slice") return LowerSlice(c, n);
  if (op == "Concat") return LowerConcatSplit(c, n, /*split=*/false);
  if (op == "Split") return LowerConcatSplit(c, n, /*split=*/true);
  if (op == "Pad") return LowerPad(c, n);
  if (op == "Gather") return LowerGather(c, n);
  if (op == "Expand") return LowerExpand(c, n);
  if (op == "Tile") return LowerTile(c, n);
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    return LowerDepthSpace(c, n);
  }
  if (op == "ConstantOfShape") return LowerConstantOfShape(c, n);
  return absl::UnimplementedError("no lowering for this op");
}

}  // namespace tunefleet::onnx_import
