// More ops computed by constant folding (constant_fold.h) on small
// constants (kMaxFoldElements at most): elementwise math and comparisons
// (bounds of a Clip computed from constants, an If's condition),
// ConstantOfShape, Expand and Range. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_OPS_H_
#define TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_OPS_H_

#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {

// Whether FoldElementwise computes `op`.
bool IsFoldableElementwise(const std::string& op);

// `op` of `in` with numpy broadcasting: unary Neg, Abs, Sqrt, Exp, Log,
// Reciprocal, Floor, Ceil, Not; binary Pow, Max, Min, Equal, Less,
// Greater, LessOrEqual, GreaterOrEqual, And, Or; Where(cond, a, b).
// Comparisons and logic give BOOL; the others the type of their (first
// value) input. nullopt for other ops, types that do not fit, or shapes
// that do not broadcast.
std::optional<TensorValue> FoldElementwise(
    const std::string& op, const std::vector<const TensorValue*>& in);

// ConstantOfShape of `shape` (int64 dims) with node `n`'s value attribute
// (default float 0).
std::optional<TensorValue> FoldConstantOfShape(const onnx::NodeProto& n,
                                               const TensorValue& shape);

// Expand of `x` to `shape` (bidirectional broadcast, as ONNX's Expand).
std::optional<TensorValue> FoldExpand(const TensorValue& x,
                                      const TensorValue& shape);

// Range(start, limit, delta) of scalars.
std::optional<TensorValue> FoldRange(const TensorValue& start,
                                     const TensorValue& limit,
                                     const TensorValue& delta);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_OPS_H_
