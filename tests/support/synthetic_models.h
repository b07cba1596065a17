// Synthetic ONNX models with every op and padding form of issue 35 item 3,
// written with ONNX's protobuf classes (GraphBuilder, onnx_test_models.h):
// one small model per form, named after it, so that a failure names the
// op, and one model with all of them (`all_forms`). The model tests run
// them through ONNX Runtime (the oracle, ort_oracle.h) and through
// `tunefleet run`, and compare.
//
// Every model is opset 13 (ReduceSum's axes an input, the others' an
// attribute; Clip's bounds, Split's sizes, Pad's pads inputs) and
// IR version 7, with float32 inputs of fixed shapes. Weights are seeded
// pseudo-random values (the same bytes on every build), scaled by
// 1/sqrt(fan-in) so activations stay near [-1, 1]. Each model is defined
// for any finite input: Sqrt, Log, Reciprocal and fractional Pow see
// Abs(x) + a positive constant; the tests feed uniform values in [-1, 1).
#ifndef TUNEFLEET_TESTS_SYNTHETIC_MODELS_H_
#define TUNEFLEET_TESTS_SYNTHETIC_MODELS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet::testing {

// A tensor name and its shape.
using NamedShape = std::pair<std::string, std::vector<int64_t>>;

struct SyntheticModel {
  std::string name;   // "conv_same_upper", ...: a file or test name
  std::string forms;  // what it holds, in issue 35's words
  std::string bytes;  // the serialized onnx.ModelProto
  std::vector<NamedShape> inputs;   // float32 graph inputs, in order
  std::vector<NamedShape> outputs;  // float32 graph outputs and the shapes
                                    // ONNX's semantics give them, in order
};

// The one-form models, then `all_forms` last. Names are unique and made of
// [a-z0-9_].
std::vector<SyntheticModel> SyntheticModels();

// The model with every form (the last of SyntheticModels()).
SyntheticModel AllFormsModel();

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SYNTHETIC_MODELS_H_
