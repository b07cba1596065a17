// Constant folding on a fixed input shape: what a model computes from its
// constants and its tensors' shapes alone (Shape -> Gather/Slice -> Concat
// -> Reshape chains that exporters write for dynamic dims) is computed at
// import time, so that shape inference knows the shapes behind them.
// Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_H_
#define TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace tunefleet::onnx_import {

// Rounds of folding and shape inference at most (each round folds every
// node it can in one pass over the graph; three suffice for PP-OCRv4).
inline constexpr int kMaxFoldRounds = 8;

// After shape inference (model's value_info filled), computes the values
// of Shape (of a tensor of known shape), Size, Constant, Cast, Slice,
// Gather, Concat, Unsqueeze, Squeeze, Reshape / Flatten / Identity of
// constants, Add / Sub / Mul / Div of constants (numpy broadcasting) and
// the ops of constant_fold_ops.h (elementwise math and comparisons,
// ConstantOfShape, Expand, Range), each of kMaxFoldElements elements at
// most; replaces each folded node by a Constant node of the same name and
// output (node indices stay) and inlines the If nodes whose condition has
// become constant (inline_if.h: the node list changes there), then infers
// shapes again, until a round changes nothing or kMaxFoldRounds.
// `folded_ops` gets one entry per node: the op type of a folded node, ""
// for the others. `opset`: of the default domain (Slice, Squeeze and
// Unsqueeze take attributes before 10 / 13). Errors: those of
// InferShapesIsolated (shape_inference.h).
absl::Status FoldConstants(onnx::ModelProto* model, int64_t opset,
                           absl::string_view name,
                           std::vector<std::string>* folded_ops);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_CONSTANT_FOLD_H_
