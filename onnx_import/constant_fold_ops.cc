#include "onnx_import/constant_fold_ops.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tunefleet::onnx_import {
namespace {

bool IsCompare(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" ||
         op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" ||
         op == "Or" || op == "Not";
}

// The broadcast dims of `in`, or nullopt.
std::optional<Dims> BroadcastDims(const std::vector<const TensorValue*>& in) {
  size_t rank = 0;
  for (const TensorValue* t : in) rank = std::max(rank, t->dims.size());
  Dims out(rank, 1);
  for (const TensorValue* t : in) {
    const size_t lead = rank - t->dims.size();
    for (size_t k = 0; k < t->dims.size(); ++k) {
      const int64_t d = t->dims[k];
      int64_t& o = out[lead + k];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  return out;
}

// Element index into `t` of output element `i` of `out` (row-major).
int64_t SourceIndex(const TensorValue& t, const Dims& out, int64_t i) {
  const size_t lead = out.size() - t.dims.size();
  int64_t index = 0, stride = 1, rest = i;
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t x = rest % out[k];
    rest /= out[k];
    if (k < lead) continue;
    const int64_t d = t.dims[k - lead];
    if (d != 1) index += x * stride;
    stride *= d;
  }
  return index;
}

double Apply(const std::string& op, const std::vector<double>& v) {
  const double x = v[0];
  if (op == "Neg") return -x;
  if (op == "Abs") return std::fabs(x);
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Reciprocal") return 1 / x;
  if (op == "Floor") return std::floor(x);
  if (op == "Ceil") return std::ceil(x);
  if (op == "Not") return x == 0 ? 1 : 0;
  if (op == "Where") return x != 0 ? v[1] : v[2];
  const double y = v[1];
  if (op == "Pow") return std::pow(x, y);
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Equal") return x == y;
  if (op == "Less") return x < y;
  if (op == "Greater") return x > y;
  if (op == "LessOrEqual") return x <= y;
  if (op == "GreaterOrEqual") return x >= y;
  if (op == "And") return x != 0 && y != 0;
  return x != 0 || y != 0;  // Or
}

}  // namespace

bool IsFoldableElementwise(const std::string& op) {
  static const std::set<std::string> kOps = {"Neg",
                                             "Abs",
                                             "Sqrt",
                                             "Exp",
                                             "Log",
                                             "Reciprocal",
                                             "Floor",
                                             "Ceil",
                                             "Not",
                                             "Pow",
                                             "Max",
                                             "Min",
                                             "Equal",
                                             "Less",
                                             "Greater",
                                             "LessOrEqual",
                                             "GreaterOrEqual",
                                             "And",
                                             "Or",
                                             "Where"};
  return kOps.count(op) > 0;
}

std::optional<TensorValue> FoldElementwise(
    const std::string& op, const std::vector<const TensorValue*>& in) {
  if (!IsFoldableElementwise(op) || in.empty()) return std::nullopt;
  const bool unary = op == "Neg" || op == "Abs" || op == "Sqrt" ||
                     op == "Exp" || op == "Log" || op == "Reciprocal" ||
                     op == "Floor" || op == "Ceil" || op == "Not";
  const size_t arity = unary ? 1 : op == "Where" ? 3 : 2;
  if (in.size() != arity) return std::nullopt;
  // The value inputs (Where's are its second and third) share a kind.
  const TensorValue& first = op == "Where" ? *in[1] : *in[0];
  for (size_t k = op == "Where" ? 1 : 0; k < in.size(); ++k) {
    if (in[k]->is_float() != first.is_float()) return std::nullopt;
  }
  const bool float_math = unary && op != "Neg" && op != "Abs" && op != "Not";
  if (float_math && !first.is_float()) return std::nullopt;
  std::optional<Dims> dims = BroadcastDims(in);
  if (!dims) return std::nullopt;
  std::optional<int64_t> count = ElementCount(*dims, kMaxFoldElements);
  if (!count) return std::nullopt;
  TensorValue out;
  out.type = IsCompare(op) ? onnx::TensorProto::BOOL : first.type;
  out.dims = *dims;
  std::vector<double> args(in.size());
  for (int64_t i = 0; i < *count; ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      args[k] = in[k]->at(SourceIndex(*in[k], *dims, i));
    }
    const double v = Apply(op, args);
    if (out.is_float()) {
      out.floats.push_back(v);
    } else {
      if (!std::isfinite(v) || std::fabs(v) > 9e18) return std::nullopt;
      out.ints.push_back(static_cast<int64_t>(v));
    }
  }
  return out;
}

std::optional<TensorValue> FoldConstantOfShape(const onnx::NodeProto& n,
                                               const TensorValue& shape) {
  if (shape.is_float()) return std::nullopt;
  TensorValue value;
  value.type = onnx::TensorProto::FLOAT;
  value.floats = {0.0};
  for (const auto& a : n.attribute()) {
    if (a.name() != "value") continue;
    std::optional<TensorValue> v = ReadTensor(a.t(), 1);
    if (!v || v->size() != 1) return std::nullopt;
    value = *v;
  }
  std::optional<int64_t> count = ElementCount(shape.ints, kMaxFoldElements);
  if (!count) return std::nullopt;
  TensorValue out;
  out.type = value.type;
  out.dims = shape.ints;
  if (out.is_float()) {
    out.floats.assign(*count, value.floats[0]);
  } else {
    out.ints.assign(*count, value.ints[0]);
  }
  return out;
}

std::optional<TensorValue> FoldExpand(const TensorValue& x,
                                      const TensorValue& shape) {
  if (shape.is_float()) return std::nullopt;
  for (int64_t d : shape.ints) {
    if (d < 0) return std::nullopt;
  }
  TensorValue target;
  target.type = x.type;
  target.dims = shape.ints;
  std::optional<Dims> dims = BroadcastDims({&x, &target});
  if (!dims) return std::nullopt;
  std::optional<int64_t> count = ElementCount(*dims, kMaxFoldElements);
  if (!count) return std::nullopt;
  TensorValue out;
  out.type = x.type;
  out.dims = *dims;
  for (int64_t i = 0; i < *count; ++i) {
    const int64_t from = SourceIndex(x, *dims, i);
    if (out.is_float()) {
      out.floats.push_back(x.floats[from]);
    } else {
      out.ints.push_back(x.ints[from]);
    }
  }
  return out;
}

std::optional<TensorValue> FoldRange(const TensorValue& start,
                                     const TensorValue& limit,
                                     const TensorValue& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 ||
      start.is_float() != limit.is_float() ||
      start.is_float() != delta.is_float()) {
    return std::nullopt;
  }
  const double s = start.at(0), l = limit.at(0), d = delta.at(0);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
    return std::nullopt;
  }
  const double n = std::max(std::ceil((l - s) / d), 0.0);
  if (n > kMaxFoldElements) return std::nullopt;
  TensorValue out;
  out.type = start.type;
  out.dims = {static_cast<int64_t>(n)};
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    if (out.is_float()) {
      out.floats.push_back(s + i * d);
    } else {
      // Wrapping arithmetic: hostile values must not be undefined.
      out.ints.push_back(static_cast<int64_t>(
          static_cast<uint64_t>(start.ints[0]) +
          static_cast<uint64_t>(i) * static_cast<uint64_t>(delta.ints[0])));
    }
  }
  return out;
}

}  // namespace tunefleet::onnx_import
