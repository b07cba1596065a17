#include "cli/model_plans.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "model_runtime/plan_format.h"

namespace tunefleet::cli {

absl::StatusOr<LoadedModel> HashModel(const std::string& path,
                                      const std::vector<std::string>& shapes) {
  LoadedModel m;
  m.path = path;
  for (const std::string& s : shapes) {
    if (absl::Status st = onnx_import::ParseInputShape(s, &m.input_shapes);
        !st.ok()) {
      return st;
    }
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no model file ", path));
  }
  std::string bytes, error;
  if (tunefleet_tuned::ReadWholeFile(path, &bytes, &error) != 0) {
    return absl::NotFoundError(error);
  }
  m.name = std::filesystem::path(path).filename().string();
  m.stem = m.name;
  if (absl::EndsWith(m.stem, ".onnx")) m.stem.resize(m.stem.size() - 5);
  m.sha256 = plan_builder::Sha256Hex(bytes);
  return m;
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& path,
                                      const std::vector<std::string>& shapes) {
  absl::StatusOr<LoadedModel> m = HashModel(path, shapes);
  if (!m.ok()) return m.status();
  std::string bytes, error;
  tunefleet_tuned::ReadWholeFile(path, &bytes, &error);
  absl::StatusOr<onnx_import::ModelGraph> graph =
      onnx_import::ImportModelGraph(bytes, m->name, m->input_shapes);
  if (!graph.ok()) return graph.status();
  m->graph = *std::move(graph);
  // The shapes as used (dims fixed by the model itself included).
  for (const auto& [name, dims] : m->graph.tasks.input_shapes) {
    m->input_shapes[name] = dims;
  }
  return m;
}

absl::StatusOr<BuiltPlan> BuildModelPlan(const LoadedModel& model,
                                         data_source::RecordReader& records,
                                         plan_builder::PlanOptions options) {
  options.model_name = model.name;
  options.model_sha256 = model.sha256;
  options.input_shapes = model.input_shapes;
  BuiltPlan b;
  absl::StatusOr<tunefleet_tuned::Plan> plan =
      plan_builder::BuildPlan(model.graph, records, options, &b.report);
  if (!plan.ok()) return plan.status();
  b.plan = *std::move(plan);
  tunefleet_tuned::EncodePlan(b.plan, &b.plan_file, &b.weights_file);
  return b;
}

PlanPaths PlanPathsIn(const std::string& dir, const std::string& key,
                      const std::string& stem) {
  const std::filesystem::path base =
      std::filesystem::path(dir) / "plans" / key / stem;
  return PlanPaths{base.string() + ".tfplan", base.string() + ".tfweights"};
}

std::vector<std::string> PlanKeysIn(const std::string& dir,
                                    const std::string& stem) {
  std::vector<std::string> keys;
  std::error_code ec;
  const std::filesystem::path plans = std::filesystem::path(dir) / "plans";
  for (const auto& entry : std::filesystem::directory_iterator(plans, ec)) {
    if (entry.is_directory(ec) &&
        std::filesystem::exists(entry.path() / (stem + ".tfplan"), ec)) {
      keys.push_back(entry.path().filename().string());
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace tunefleet::cli
