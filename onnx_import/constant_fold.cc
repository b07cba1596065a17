#include "onnx_import/constant_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/status_macros.h"
#include "onnx_import/constant_fold_ops.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/inline_control.h"
#include "onnx_import/shape_inference.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {
namespace {

using Values = std::map<std::string, TensorValue>;

// Row-major strides of `dims`.
Dims Strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Elements of dims[begin, end) (0 when a dim is 0); the tensors here are
// of kMaxFoldElements at most.
int64_t Count(const Dims& dims, int64_t begin, int64_t end) {
  return ElementCount(Dims(dims.begin() + begin, dims.begin() + end),
                      kMaxFoldElements)
      .value_or(0);
}

// An empty tensor of `type` and `dims`, or nullopt past kMaxFoldElements.
std::optional<TensorValue> Make(int32_t type, Dims dims) {
  std::optional<int64_t> n = ElementCount(dims, kMaxFoldElements);
  if (!n) return std::nullopt;
  TensorValue v;
  v.type = type;
  v.dims = std::move(dims);
  if (v.is_float()) {
    v.floats.resize(*n);
  } else {
    v.ints.resize(*n);
  }
  return v;
}

// Copies element `from` of `src` to element `to` of `dst` (same kind).
void CopyElement(const TensorValue& src, int64_t from, TensorValue& dst,
                 int64_t to) {
  if (dst.is_float()) {
    dst.floats[to] = src.floats[from];
  } else {
    dst.ints[to] = src.ints[from];
  }
}

std::optional<TensorValue> Broadcast(const std::string& op,
                                     const TensorValue& a,
                                     const TensorValue& b) {
  if (a.is_float() != b.is_float()) return std::nullopt;
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  Dims ad(rank - a.dims.size(), 1), bd(rank - b.dims.size(), 1), od(rank);
  ad.insert(ad.end(), a.dims.begin(), a.dims.end());
  bd.insert(bd.end(), b.dims.begin(), b.dims.end());
  for (size_t i = 0; i < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) return std::nullopt;
    od[i] = ad[i] == 1 ? bd[i] : ad[i];
  }
  std::optional<TensorValue> out = Make(a.type, od);
  if (!out) return std::nullopt;
  const Dims as = Strides(ad), bs = Strides(bd), os = Strides(od);
  for (int64_t i = 0; i < out->size(); ++i) {
    int64_t ai = 0, bi = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t x = (i / os[d]) % od[d];
      if (ad[d] != 1) ai += x * as[d];
      if (bd[d] != 1) bi += x * bs[d];
    }
    if (out->is_float()) {
      const double x = a.floats[ai], y = b.floats[bi];
      out->floats[i] = op == "Add"   ? x + y
                       : op == "Sub" ? x - y
                       : op == "Mul" ? x * y
                                     : x / y;
    } else {
      const int64_t x = a.ints[ai], y = b.ints[bi];
      if (op == "Div" && (y == 0 || (y == -1 && x == INT64_MIN))) {
        return std::nullopt;
      }
      // Wrapping arithmetic: hostile values must not be undefined.
      const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
      out->ints[i] = op == "Add"   ? static_cast<int64_t>(ux + uy)
                     : op == "Sub" ? static_cast<int64_t>(ux - uy)
                     : op == "Mul" ? static_cast<int64_t>(ux * uy)
                                   : x / y;
    }
  }
  return out;
}

std::optional<TensorValue> Cast(const TensorValue& in, int64_t to) {
  if (!FoldableType(static_cast<int32_t>(to))) return std::nullopt;
  TensorValue out;
  out.type = static_cast<int32_t>(to);
  out.dims = in.dims;
  for (int64_t i = 0; i < in.size(); ++i) {
    const double x = in.at(i);
    if (out.is_float()) {
      out.floats.push_back(in.is_float() ? x : static_cast<double>(in.ints[i]));
    } else if (out.type == onnx::TensorProto::BOOL) {
      out.ints.push_back(x != 0 ? 1 : 0);
    } else if (!in.is_float()) {
      out.ints.push_back(in.ints[i]);
    } else {
      if (!std::isfinite(x) || std::fabs(x) > 9e18) return std::nullopt;
      out.ints.push_back(static_cast<int64_t>(x));
    }
  }
  return out;
}

std::optional<TensorValue> Reshape(const TensorValue& in, const Dims& shape,
                                   bool allow_zero) {
  Dims dims = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (i >= in.dims.size()) return std::nullopt;
      dims[i] = in.dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
      continue;
    }
    if (dims[i] < 0) return std::nullopt;
    std::optional<int64_t> k = ElementCount({known, dims[i]}, kMaxFoldElements);
    if (!k) return std::nullopt;
    known = *k;
  }
  if (infer >= 0) {
    if (known == 0 || in.size() % known != 0) return std::nullopt;
    dims[infer] = in.size() / known;
  }
  std::optional<int64_t> n = ElementCount(dims, kMaxFoldElements);
  if (!n || *n != in.size()) return std::nullopt;
  TensorValue out = in;
  out.dims = std::move(dims);
  return out;
}

std::optional<TensorValue> Slice(const TensorValue& in, Dims starts, Dims ends,
                                 Dims axes, Dims steps) {
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return std::nullopt;
  }
  Dims begin(rank, 0), step(rank, 1), out_dims = in.dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = NormalizeAxis(axes[i], rank);
    if (a < 0 || steps[i] == 0) return std::nullopt;
    // ONNX Slice: negative starts and ends count from the end (+d), then
    // starts clamp to [0, d] and ends to [0, d] for a positive step,
    // starts to [0, d - 1] and ends to [-1, d - 1] for a negative one.
    const int64_t d = in.dims[a];  // <= kMaxFoldElements: no overflow below
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -d ? lo : v + d;  // -d..-1 count from the end
      return std::clamp(v, lo, hi);
    };
    // A step past d + 1 takes one element, as d + 1 does; clamping it
    // keeps the count's arithmetic in range for steps near INT64_MAX / MIN.
    const int64_t st = std::clamp(steps[i], -(d + 1), d + 1);
    int64_t s = 0, e = 0;
    if (d == 0) {
      out_dims[a] = 0;
    } else if (st > 0) {
      s = clamp(starts[i], 0, d);
      e = clamp(ends[i], 0, d);
      out_dims[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = clamp(starts[i], 0, d - 1);
      e = clamp(ends[i], -1, d - 1);
      out_dims[a] = s > e ? (s - e - st - 1) / -st : 0;
    }
    begin[a] = s;
    step[a] = st;
  }
  std::optional<TensorValue> out = Make(in.type, out_dims);
  if (!out) return std::nullopt;
  const Dims is = Strides(in.dims), os = Strides(out_dims);
  for (int64_t i = 0; i < out->size(); ++i) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      from += (begin[d] + ((i / os[d]) % out_dims[d]) * step[d]) * is[d];
    }
    CopyElement(in, from, *out, i);
  }
  return out;
}

std::optional<TensorValue> Gather(const TensorValue& data,
                                  const TensorValue& indices, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  axis = NormalizeAxis(axis, rank);
  if (axis < 0 || indices.is_float()) return std::nullopt;
  Dims out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1,
                  data.dims.end());
  std::optional<TensorValue> out = Make(data.type, out_dims);
  if (!out) return std::nullopt;
  const int64_t outer = Count(data.dims, 0, axis),
                inner = Count(data.dims, axis + 1, rank);
  const int64_t d = data.dims[axis];
  int64_t to = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < indices.size(); ++k) {
      int64_t idx = indices.ints[k];
      if (idx < -d || idx >= d) return std::nullopt;
      if (idx < 0) idx += d;
      for (int64_t in = 0; in < inner; ++in) {
        CopyElement(data, (o * d + idx) * inner + in, *out, to++);
      }
    }
  }
  return out;
}

std::optional<TensorValue> Concat(const std::vector<const TensorValue*>& in,
                                  int64_t axis) {
  if (in.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  axis = NormalizeAxis(axis, rank);
  if (axis < 0) return std::nullopt;
  Dims out_dims = in[0]->dims;
  out_dims[axis] = 0;
  for (const TensorValue* t : in) {
    if (t->type != in[0]->type || t->dims.size() != in[0]->dims.size()) {
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && t->dims[d] != in[0]->dims[d]) return std::nullopt;
    }
    // Each input's dims are kMaxFoldElements at most: no overflow.
    out_dims[axis] += t->dims[axis];
    if (out_dims[axis] > kMaxFoldElements) return std::nullopt;
  }
  std::optional<TensorValue> out = Make(in[0]->type, out_dims);
  if (!out) return std::nullopt;
  const int64_t outer = Count(out_dims, 0, axis);
  int64_t to = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const TensorValue* t : in) {
      const int64_t block = outer == 0 ? 0 : t->size() / outer;
      for (int64_t k = 0; k < block; ++k) {
        CopyElement(*t, o * block + k, *out, to++);
      }
    }
  }
  return out;
}

// Squeeze (remove = true) or Unsqueeze of `in` on `axes`.
std::optional<TensorValue> Squeeze(const TensorValue& in, Dims axes,
                                   bool remove) {
  TensorValue out = in;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  if (remove) {
    out.dims.clear();
    for (int64_t d = 0; d < rank; ++d) {
      const bool listed =
          axes.empty() ? in.dims[d] == 1
                       : std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
                           return NormalizeAxis(a, rank) == d;
                         });
      if (listed && in.dims[d] != 1) return std::nullopt;
      if (!listed) out.dims.push_back(in.dims[d]);
    }
    return out;
  }
  const int64_t out_rank = rank + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) {
    a = NormalizeAxis(a, out_rank);
    if (a < 0) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return std::nullopt;
  }
  out.dims.clear();
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d)) {
      out.dims.push_back(1);
    } else {
      out.dims.push_back(in.dims[next++]);
    }
  }
  return out;
}

// Folds graph nodes one pass at a time.
class Folder {
 public:
  Folder(const onnx::GraphProto& g, int64_t opset) : g_(g), opset_(opset) {
    for (const auto& t : g.initializer()) {
      if (std::optional<TensorValue> v = ReadTensor(t)) values_[t.name()] = *v;
    }
    for (const auto& n : g.node()) {
      if (std::optional<onnx::TensorProto> t = ConstantNodeValue(n)) {
        if (std::optional<TensorValue> v = ReadTensor(*t)) {
          values_[n.output(0)] = *v;
        }
      }
    }
  }

  // The value of node `n`'s output, when its inputs allow.
  std::optional<TensorValue> Fold(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "Shape" || op == "Size") {
      std::optional<Dims> s = g_.Shape(Input(n, 0));
      if (!s) {
        if (const TensorValue* v = Get(Input(n, 0))) s = v->dims;
      }
      if (!s) return std::nullopt;
      TensorValue out;
      out.type = onnx::TensorProto::INT64;
      if (op == "Size") {
        std::optional<int64_t> count = Product(*s, 0, s->size());
        if (!count) return std::nullopt;
        out.ints = {*count};
        return out;
      }
      const int64_t rank = static_cast<int64_t>(s->size());
      int64_t start = IntAttr(n, "start", 0), end = IntAttr(n, "end", rank);
      start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
      end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
      for (int64_t d = start; d < end; ++d) out.ints.push_back((*s)[d]);
      out.dims = {static_cast<int64_t>(out.ints.size())};
      return out;
    }
    if (IsFoldableElementwise(op) || op == "Range") {
      std::vector<const TensorValue*> in;
      for (const std::string& name : n.input()) {
        const TensorValue* v = Get(name);
        if (v == nullptr) return std::nullopt;
        in.push_back(v);
      }
      if (op != "Range") return FoldElementwise(op, in);
      if (in.size() != 3) return std::nullopt;
      return FoldRange(*in[0], *in[1], *in[2]);
    }
    const TensorValue* x = Get(Input(n, 0));
    if (x == nullptr) return std::nullopt;
    if (op == "Identity") return *x;
    if (op == "ConstantOfShape") return FoldConstantOfShape(n, *x);
    if (op == "Expand") {
      const TensorValue* shape = Get(Input(n, 1));
      if (shape == nullptr) return std::nullopt;
      return FoldExpand(*x, *shape);
    }
    if (op == "Cast") return Cast(*x, IntAttr(n, "to", 0));
    if (op == "Reshape") {
      const TensorValue* shape = Get(Input(n, 1));
      if (shape == nullptr || shape->is_float()) return std::nullopt;
      return Reshape(*x, shape->ints, IntAttr(n, "allowzero", 0) != 0);
    }
    if (op == "Flatten") {
      const int64_t rank = static_cast<int64_t>(x->dims.size());
      int64_t axis = IntAttr(n, "axis", 1);
      if (axis < -rank || axis > rank) return std::nullopt;
      if (axis < 0) axis += rank;
      std::optional<int64_t> rows = Product(x->dims, 0, axis);
      if (!rows || *rows == 0) return std::nullopt;
      return Reshape(*x, {*rows, x->size() / *rows}, false);
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      const TensorValue* y = Get(Input(n, 1));
      if (y == nullptr) return std::nullopt;
      return Broadcast(op, *x, *y);
    }
    if (op == "Gather") {
      const TensorValue* idx = Get(Input(n, 1));
      if (idx == nullptr) return std::nullopt;
      return Gather(*x, *idx, IntAttr(n, "axis", 0));
    }
    if (op == "Concat") {
      std::vector<const TensorValue*> in;
      for (const std::string& name : n.input()) {
        const TensorValue* v = Get(name);
        if (v == nullptr) return std::nullopt;
        in.push_back(v);
      }
      return Concat(in, IntAttr(n, "axis", 0));
    }
    if (op == "Squeeze" || op == "Unsqueeze") {
      Dims axes = IntsAttr(n, "axes", {});
      if (opset_ >= 13 && n.input_size() > 1 && !Input(n, 1).empty()) {
        const TensorValue* a = Get(Input(n, 1));
        if (a == nullptr || a->is_float()) return std::nullopt;
        axes = a->ints;
      }
      return Squeeze(*x, axes, op == "Squeeze");
    }
    if (op == "Slice") {
      if (opset_ < 10) {
        return Slice(*x, IntsAttr(n, "starts", {}), IntsAttr(n, "ends", {}),
                     IntsAttr(n, "axes", {}), {});
      }
      Dims args[4];
      for (int k = 0; k < 4; ++k) {
        if (Input(n, k + 1).empty()) continue;
        const TensorValue* a = Get(Input(n, k + 1));
        if (a == nullptr || a->is_float()) return std::nullopt;
        args[k] = a->ints;
      }
      return Slice(*x, args[0], args[1], args[2], args[3]);
    }
    return std::nullopt;
  }

  void Set(const std::string& name, TensorValue v) {
    values_[name] = std::move(v);
  }

 private:
  const TensorValue* Get(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  GraphIndex g_;
  int64_t opset_;
  Values values_;
};

// One pass over the graph; returns the nodes folded.
int FoldPass(onnx::GraphProto* graph, int64_t opset,
             std::vector<std::string>* folded_ops) {
  Folder folder(*graph, opset);
  int folded = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* n = graph->mutable_node(i);
    if (n->op_type() == "Constant" || n->output_size() != 1 ||
        n->output(0).empty() ||
        (!n->domain().empty() && n->domain() != "ai.onnx")) {
      continue;
    }
    std::optional<TensorValue> v = folder.Fold(*n);
    if (!v) continue;
    if ((*folded_ops)[i].empty()) (*folded_ops)[i] = n->op_type();
    const std::string out = n->output(0);
    n->clear_input();
    n->clear_attribute();
    n->set_op_type("Constant");
    n->clear_domain();
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = WriteTensor(*v, out);
    folder.Set(out, std::move(*v));
    ++folded;
  }
  return folded;
}

}  // namespace

absl::Status FoldConstants(onnx::ModelProto* model, int64_t opset,
                           absl::string_view name,
                           std::vector<std::string>* folded_ops) {
  onnx::GraphProto* graph = model->mutable_graph();
  folded_ops->assign(graph->node_size(), "");
  for (int round = 0; round < kMaxFoldRounds; ++round) {
    const int folded = FoldPass(graph, opset, folded_ops);
    const int inlined = InlineConstantIfs(graph, folded_ops) +
                        UnrollConstantLoops(graph, opset, folded_ops);
    if (folded + inlined == 0) break;
    TUNEFLEET_RETURN_IF_ERROR(InferShapesIsolated(model, name));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::onnx_import
