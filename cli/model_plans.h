// Model plans for the CLI (`tunefleet emit --onnx`, `tunefleet run`): an
// ONNX file lowered to steps (onnx_import/model_graph.h) and a device key's
// records made into the plan's two files (plan_builder/,
// model_runtime/plan_format.h), and where an emitted library keeps them.
#ifndef TUNEFLEET_CLI_MODEL_PLANS_H_
#define TUNEFLEET_CLI_MODEL_PLANS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data_source/data_source.h"
#include "model_runtime/model_plan.h"
#include "onnx_import/model_graph.h"
#include "onnx_import/onnx_import.h"
#include "plan_builder/plan_builder.h"

namespace tunefleet::cli {

// An ONNX model read and lowered once.
struct LoadedModel {
  std::string path;
  std::string name;    // the file's name, for messages and the plan
  std::string stem;    // the plan files' name: the file name without .onnx
  std::string sha256;  // of the bytes, hex
  onnx_import::InputShapes input_shapes;
  onnx_import::ModelGraph graph;
};

// Reads `path`, parses the NAME=DIMS shapes and lowers the model. Errors:
// NOT_FOUND for a missing file; INVALID_ARGUMENT for a bad shape or model;
// FAILED_PRECONDITION naming the first node that cannot run.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const std::vector<std::string>& shapes);

// The SHA-256 of the file at `path` (hex) and its parsed shapes, without
// lowering it (for a plan read from files). Errors: as LoadModel's first
// two.
absl::StatusOr<LoadedModel> HashModel(const std::string& path,
                                      const std::vector<std::string>& shapes);

struct BuiltPlan {
  tunefleet_tuned::Plan plan;
  plan_builder::PlanReport report;
  std::string plan_file;
  std::string weights_file;
};

// The plan of `model` on `options.device_key` (model fields filled from
// `model`). Errors: plan_builder::BuildPlan's.
absl::StatusOr<BuiltPlan> BuildModelPlan(const LoadedModel& model,
                                         data_source::RecordReader& records,
                                         plan_builder::PlanOptions options);

// Where an emitted library keeps the plan of model `stem` for `key`:
// <dir>/plans/<key>/<stem>.tfplan and .tfweights.
struct PlanPaths {
  std::string plan;
  std::string weights;
};
PlanPaths PlanPathsIn(const std::string& dir, const std::string& key,
                      const std::string& stem);

// The device keys with a plan of `stem` in the emitted library at `dir`.
std::vector<std::string> PlanKeysIn(const std::string& dir,
                                    const std::string& stem);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MODEL_PLANS_H_
