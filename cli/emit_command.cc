#include "cli/emit_command.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "cli/common.h"
#include "cli/model_plans.h"
#include "cli/server_source.h"
#include "emitter/emitter.h"
#include "kernels_templates/registry.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

// The only key of `keys`, for a command without --device-key. Errors:
// INVALID_ARGUMENT listing them when there is not exactly one.
absl::StatusOr<std::string> OnlyDeviceKey(const std::vector<std::string>& keys,
                                          const std::string& where) {
  if (keys.size() == 1) return keys.front();
  return absl::InvalidArgumentError(absl::StrCat(
      "--device-key is needed: ", where, " has ", keys.size(),
      " device keys:", keys.empty() ? "" : " ", absl::StrJoin(keys, " ")));
}

// A model plan written beside the library.
struct PlanLine {
  std::string key;
  std::string file;  // relative to --out
  plan_builder::PlanReport report;
  uint64_t arena_bytes = 0;
  uint64_t tensor_bytes = 0;
  uint64_t weights_bytes = 0;
};

// `keys`: the keys emitted (those given, else the only one found).
void PrintSummary(const EmitOptions& o, const std::vector<std::string>& keys,
                  const emitter::EmitSummary& summary,
                  const std::vector<PlanLine>& plans) {
  if (o.json) {
    nlohmann::json plan_json = nlohmann::json::array();
    for (const PlanLine& p : plans) {
      plan_json.push_back(
          {{"device_key", p.key},
           {"plan", p.file},
           {"layers", p.report.steps},
           {"tuned", p.report.tuned},
           {"reference", p.report.reference},
           {"library", p.report.library},
           {"no_record", p.report.no_record},
           {"estimated_ms", p.report.estimate_ns / 1e6},
           {"layers_without_estimate", p.report.without_estimate},
           {"arena_bytes", p.arena_bytes},
           {"tensor_bytes", p.tensor_bytes},
           {"weights_bytes", p.weights_bytes}});
    }
    std::cout << JsonText(nlohmann::json{
                     {"out", o.out},
                     {"plans", plan_json},
                     {"device_keys", keys},
                     {"entries", summary.entries},
                     {"reference_entries", summary.reference_entries},
                     {"library_entries", summary.library_entries},
                     {"driver_revisions", summary.driver_revisions},
                     {"unmeasured_entries", summary.unmeasured_entries},
                     {"files", summary.files},
                     {"skipped", summary.skipped}})
              << "\n";
    return;
  }
  std::cout << "wrote " << o.out << ": " << summary.entries
            << (summary.entries == 1 ? " tuned entry" : " tuned entries");
  // " (N entries that ...)" for each kind of entry the library has.
  const auto entries_note = [](int64_t n, const char* what) {
    if (n > 0) std::cout << " (" << n << " " << what << ")";
  };
  entries_note(summary.reference_entries - summary.unmeasured_entries,
               "use the naive reference kernel, faster than every tuned "
               "config measured");
  entries_note(summary.library_entries,
               "call a vendor library, measured fastest for their workload; "
               "the package links it");
  std::cout << "\n";
  if (summary.driver_revisions > static_cast<int>(keys.size())) {
    std::cout << "  " << summary.driver_revisions
              << " driver revisions, each with the records measured on its "
                 "driver";
    if (summary.unmeasured_entries > 0) {
      std::cout << "; " << summary.unmeasured_entries
                << " entries run the naive reference kernel where a revision "
                   "has no record of the workload";
    }
    std::cout << " (docs/DRIVER_DRIFT.md)\n";
  }
  for (const std::string& f : summary.files) std::cout << "  " << f << "\n";
  for (const std::string& s : summary.skipped) {
    std::cout << "  skipped " << s << "\n";
  }
  for (const PlanLine& p : plans) {
    std::cout << "  model plan for " << p.key << ": " << p.file << ": "
              << p.report.steps << " layers (" << p.report.tuned << " tuned, "
              << p.report.reference << " naive";
    if (p.report.no_record > 0) {
      std::cout << ", " << p.report.no_record << " of them without a record";
    }
    std::cout << ", " << p.report.library << " library calls), estimated "
              << p.report.estimate_ns / 1e6 << " ms, arena " << p.arena_bytes
              << " of " << p.tensor_bytes << " bytes of tensors, weights "
              << p.weights_bytes << " bytes\n";
  }
  std::cout << "use it with add_subdirectory(" << o.out
            << ") or cmake --install, then find_package(tunefleet_tuned) and "
               "link tunefleet::tuned\n";
}

}  // namespace

void AddEmitOptions(CLI::App* cmd, EmitOptions& o) {
  CLI::Option* db = AddDbOption(cmd, o.db, "database file");
  AddServerFlags(cmd, o.server, o.connection,
                 "read the records from a tunefleet-server (HOST:PORT) "
                 "instead of --db")
      ->excludes(db);
  cmd->add_option("--page-size", o.page_size,
                  "with --server: records (and jobs) per page asked of the "
                  "server (default: the server's for records, 1000 jobs)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--device-key", o.device_keys,
                  "device key to include (repeat for several; default: the "
                  "database's or server's only device key)");
  cmd->add_option("--out", o.out, "output directory")->required();
  cmd->add_option("--onnx", o.onnx,
                  "also write the plan of this ONNX model for each device "
                  "key (plans/<key>/<model>.tfplan and .tfweights; "
                  "tunefleet_tuned::Model runs it, `tunefleet run --plan` "
                  "too)");
  cmd->add_option("--input-shape", o.input_shapes,
                  "with --onnx: dims of an input, NAME=D1,D2,... (repeat "
                  "for several)");
  cmd->add_flag("--json", o.json, "print a JSON summary on stdout");
}

int RunEmit(const EmitOptions& o) {
  absl::StatusOr<std::unique_ptr<data_source::DataSource>> opened =
      OpenDataSource({o.server, o.connection, o.db, o.page_size, o.page_size});
  if (!opened.ok()) return ReportError("emit", opened.status());
  std::unique_ptr<data_source::DataSource> records = *std::move(opened);
  emitter::EmitOptions options{o.device_keys, o.out};
  if (options.device_keys.empty()) {
    absl::StatusOr<std::vector<std::string>> keys = records->DeviceKeys();
    if (!keys.ok()) return ReportError("emit", keys.status());
    absl::StatusOr<std::string> key =
        OnlyDeviceKey(*keys, o.server.empty() ? "the database" : "the server");
    if (!key.ok()) return ReportError("emit", key.status());
    options.device_keys.push_back(*key);
  }
  // The model's plans first, so that a model that cannot run leaves
  // nothing written.
  std::vector<std::pair<std::string, BuiltPlan>> plans;  // by key
  std::optional<LoadedModel> model;
  if (!o.onnx.empty()) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(o.onnx, o.input_shapes);
    if (!loaded.ok()) return ReportError("emit", loaded.status());
    model = *std::move(loaded);
    for (const std::string& key : options.device_keys) {
      plan_builder::PlanOptions plan_options;
      plan_options.device_key = key;
      absl::StatusOr<BuiltPlan> built =
          BuildModelPlan(*model, *records, plan_options);
      if (!built.ok()) {
        return ReportError(
            "emit", absl::Status(built.status().code(),
                                 absl::StrCat("device key ", key, ": ",
                                              built.status().message())));
      }
      // The plan's kernel sources are compiled into the library too
      // (LoadModelPlan accepts plans of built-in sources only).
      for (const std::string& source : built->plan.sources) {
        options.extra_sources.push_back(source);
      }
      plans.emplace_back(key, *std::move(built));
    }
  }
  absl::StatusOr<emitter::EmitSummary> summary =
      emitter::EmitLibrary(*records, options);
  if (!summary.ok()) return ReportError("emit", summary.status());
  std::vector<PlanLine> plan_lines;
  for (const auto& [key, built] : plans) {
    const PlanPaths paths = PlanPathsIn(o.out, key, model->stem);
    std::error_code ec;
    std::filesystem::create_directories(
        std::filesystem::path(paths.plan).parent_path(), ec);
    absl::Status s =
        base::WriteFileAtomically(paths.weights, built.weights_file);
    if (s.ok()) s = base::WriteFileAtomically(paths.plan, built.plan_file);
    if (!s.ok()) return ReportError("emit", s);
    const std::string rel_plan =
        std::filesystem::relative(paths.plan, o.out, ec).string();
    summary->files.push_back(rel_plan);
    summary->files.push_back(
        std::filesystem::relative(paths.weights, o.out, ec).string());
    plan_lines.push_back(
        PlanLine{key, rel_plan, built.report, built.plan.memory.arena_bytes,
                 built.plan.memory.tensor_bytes, built.weights_file.size()});
  }
  PrintSummary(o, options.device_keys, *summary, plan_lines);
  return kExitOk;
}

}  // namespace tunefleet::cli
