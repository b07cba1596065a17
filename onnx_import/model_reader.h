// Reading a model for import: parse, fix the input dims, check, infer
// shapes, fold constants. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_MODEL_READER_H_
#define TUNEFLEET_ONNX_IMPORT_MODEL_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "onnx_import/onnx_import.h"

namespace tunefleet::onnx_import {

// A model read, its input dims fixed, its shapes inferred and its
// constants folded (constant_fold.h).
struct InferredModel {
  onnx::ModelProto model;
  int64_t opset = 0;  // of the default (ai.onnx) domain
  // Per node: the op type of a node folded into a Constant node, else "".
  std::vector<std::string> folded_ops;
};

// Errors: as ImportOnnxBytes (onnx_import.h).
absl::StatusOr<InferredModel> ReadAndInfer(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_MODEL_READER_H_
