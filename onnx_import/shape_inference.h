// libonnx's shape inference, run on hostile models: their nodes checked
// against the schemas first, the inference itself in a child process.
// Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_SHAPE_INFERENCE_H_
#define TUNEFLEET_ONNX_IMPORT_SHAPE_INFERENCE_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace tunefleet::onnx_import {

// What libonnx's shape inference takes on trust, checked first (it runs
// on hostile models and does not check them): every node of an op libonnx
// knows must match its schema (input and output counts, attribute types),
// and window attributes must be positive (inference divides by strides,
// dilations and kernel sizes). Recurses into subgraphs. `opsets`: domain
// ("" for ai.onnx) -> version. Errors: INVALID_ARGUMENT naming the node.
absl::Status CheckForInference(const onnx::GraphProto& graph,
                               const std::map<std::string, int>& opsets,
                               absl::string_view name, int depth);

// Runs libonnx's shape inference in a child process (base::RunInChild)
// and takes its results (value_info and outputs) back into `model`.
// libonnx trusts the models it reads: fuzzing found null dereferences and
// divisions by zero in its shape inference (tests/fuzz/corpus/onnx_fuzzer/
// crash-*). In a child, a crash or a hang costs a refusal, not the process.
// Errors: INVALID_ARGUMENT naming the model when inference fails, crashes
// or times out; INTERNAL when no child can be started.
absl::Status InferShapesIsolated(onnx::ModelProto* model,
                                 absl::string_view name);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_SHAPE_INFERENCE_H_
