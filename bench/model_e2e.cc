// bench/model_e2e: whole models run end to end with the model runtime
// (model_runtime/, docs/MODEL_RUNTIME.md) on this machine's OpenCL device,
// against ONNX Runtime's CPU execution provider on the same input in the
// same run. Per model (default: PP-OCR's cls, det and rec from
// .cache/models/package/assets at x=1,3,48,192 / 1,3,640,640 / 1,3,48,320):
//   - the naive plan (every layer its naive reference kernel), measured;
//   - the tuned plan (the records of --db for the device's key; a layer
//     without a record runs its naive kernel), measured, beside its
//     estimate (the sum of the records' kernel times) and their ratio;
//   - the tuned plan plain (every command enqueued) and recorded (the whole
//     plan recorded at load and replayed: --record both, interleaved), each
//     beside the estimate; host CPU per run (the submitting thread's CPU
//     time) and the CPU of submitting a run alone per command, both modes;
//   - the tuned plan on the device: inputs and outputs in device buffers,
//     no host copies (what a peer with its tensors on the device times);
//   - the arena against the sum of all intermediate tensors;
//   - ONNX Runtime's CPU latency (tests/support/ort_oracle.h: ort_run.mjs
//     with onnxruntime-node, or $TUNEFLEET_ORT_COMMAND, e.g. Python's
//     onnxruntime through ort_run.py), and the largest deviation of the
//     tuned plan's outputs from ORT's, max|ours - ort| / max|ort|, beside
//     the naive plan's and ORT's own with its graph optimizations off (the
//     graph as written: no BatchNormalization folded into Conv), the
//     model's noise floor under fp32 reordering, and the tuned plan's from
//     ORT as written.
//
// Usage: model_e2e [--db tunefleet.db] [--device-key KEY]
//                  [--model NAME=FILE@INPUT=D0,D1,... ...]
//                  [--only cls,det,rec] [--runs 5] [--warmup 1]
//                  [--ort-runs 5] [--record both|auto|on|off]
//                  [--no-naive] [--no-ort] [--attribute-deviation]
//                  [--save-dir DIR] [--json]
// --attribute-deviation adds, per model, one plan per tuned workload in
// which only that workload's records are used (every other layer naive),
// each with its deviation from ORT: which tuned layer moves the outputs.
// --save-dir writes, per model, the input and the tuned, naive and ORT
// outputs as .npy files (<model>.input.<name>.npy,
// <model>.<tuned|naive|ort|ort-unoptimized>.<output>.npy), e.g. to compare
// them with a float64 run of the model (tests/support/fp64_deviation.py).
// Prints figures; it never passes or fails on a time.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/npy.h"
#include "base/stats.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/model_plans.h"
#include "cli/server_source.h"
#include "dashboard/store_source.h"
#include "data_source/data_source.h"
#include "model_run/model_runner.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/ort_oracle.h"
#include "trial/trial_request.h"

namespace tunefleet::bench {
namespace {

struct ModelSpec {
  std::string name;
  std::string file;
  std::string shape;  // INPUT=D0,D1,...
};

std::vector<ModelSpec> DefaultModels() {
  const std::string assets =
      std::string(TUNEFLEET_SOURCE_DIR) + "/.cache/models/package/assets/";
  return {
      {"cls", assets + "ch_ppocr_mobile_v2.0_cls_infer.onnx", "x=1,3,48,192"},
      {"det", assets + "ch_PP-OCRv4_det_infer.onnx", "x=1,3,640,640"},
      {"rec", assets + "ch_PP-OCRv4_rec_infer.onnx", "x=1,3,48,320"},
  };
}

struct Measured {
  double median_ms = 0, p10_ms = 0, p90_ms = 0, cpu_ms = 0;
  // --record both, where the plan was recorded: the plain runs' figures
  // (the ones above are the replays'), and the CPU time of submitting a
  // run alone, recorded and plain.
  std::optional<double> plain_median_ms, plain_cpu_ms;
  double submit_ms = 0, plain_submit_ms = 0;
  double on_device_ms = 0;  // median, inputs and outputs in device buffers
  double estimate_ms = 0;
  int without_estimate = 0;
  int tuned = 0, reference = 0, library = 0;
  uint64_t arena = 0, tensors = 0, device = 0;
  model_run::RunResult result;
};

// The largest max|ours - ref| / max|ref| over the outputs both have.
double Deviation(const std::map<std::string, base::NpyArray>& ours,
                 const std::map<std::string, base::NpyArray>& ref) {
  double worst = 0;
  for (const auto& [name, array] : ours) {
    auto it = ref.find(name);
    if (it == ref.end()) continue;
    auto d = testing::Deviation(array, it->second);
    if (d.ok()) worst = std::max(worst, d->relative());
  }
  return worst;
}

// A run's outputs by name.
std::map<std::string, base::NpyArray> Outputs(const model_run::RunResult& r) {
  std::map<std::string, base::NpyArray> out;
  for (size_t o = 0; o < r.output_names.size(); ++o) {
    out[r.output_names[o]] = base::NpyArray{r.output_dims[o], r.outputs[o]};
  }
  return out;
}

// The records of `inner` restricted to one workload's: a plan built from it
// runs that workload's tuned entries and every other layer naive.
class OneWorkloadRecords : public data_source::RecordReader {
 public:
  OneWorkloadRecords(data_source::RecordReader& inner,
                     std::vector<tunefleet::v1::TuningRecord> records)
      : inner_(inner), records_(std::move(records)) {}
  absl::StatusOr<std::vector<std::string>> DeviceKeys() override {
    return inner_.DeviceKeys();
  }
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override {
    return inner_.GetDevice(key);
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string&) override {
    return records_;
  }
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) override {
    return inner_.ReferenceTime(key, workload, template_name);
  }
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override {
    return inner_.TemplateSource(name, version);
  }

 private:
  data_source::RecordReader& inner_;
  std::vector<tunefleet::v1::TuningRecord> records_;
};

absl::StatusOr<Measured> Measure(model_run::ModelRunner& runner,
                                 const cli::LoadedModel& model,
                                 data_source::RecordReader& records,
                                 const std::string& key, bool tuned,
                                 const std::vector<std::vector<float>>& inputs,
                                 int runs, int warmup,
                                 const std::string& record) {
  plan_builder::PlanOptions options;
  options.device_key = key;
  options.device_name = runner.device().device_name;
  options.device_vendor = runner.device().device_vendor;
  options.tuned = tuned;
  options.include_library =
      std::find(runner.device().libraries.begin(),
                runner.device().libraries.end(),
                "clblast") != runner.device().libraries.end();
  absl::StatusOr<cli::BuiltPlan> built =
      cli::BuildModelPlan(model, records, options);
  if (!built.ok()) return built.status();
  model_run::RunRequest request;
  request.plan_file = built->plan_file;
  request.weights_file = built->weights_file;
  request.model_sha256 = model.sha256;
  request.device_key = key;
  request.inputs = inputs;
  request.runs = runs;
  request.warmup = warmup;
  request.profiled_runs = 0;
  request.record = record;
  absl::StatusOr<model_run::RunResult> r = runner.Run(request);
  if (!r.ok()) return r.status();
  Measured m;
  m.median_ms = base::Median(r->latency_ns) / 1e6;
  m.p10_ms = base::NearestRankPercentile(r->latency_ns, 10) / 1e6;
  m.p90_ms = base::NearestRankPercentile(r->latency_ns, 90) / 1e6;
  m.cpu_ms = base::Median(r->host_cpu_ns) / 1e6;
  m.on_device_ms = base::Median(r->device_buffers_latency_ns) / 1e6;
  if (!r->plain_latency_ns.empty()) {
    m.plain_median_ms = base::Median(r->plain_latency_ns) / 1e6;
    m.plain_cpu_ms = base::Median(r->plain_host_cpu_ns) / 1e6;
  }
  if (!r->submit_cpu_ns.empty()) {
    m.submit_ms = base::Median(r->submit_cpu_ns) / 1e6;
    m.plain_submit_ms = base::Median(r->plain_submit_cpu_ns) / 1e6;
  }
  m.estimate_ms = r->estimate_ns / 1e6;
  m.without_estimate = r->layers_without_estimate;
  m.tuned = built->report.tuned;
  m.reference = built->report.reference;
  m.library = built->report.library;
  m.arena = r->arena_bytes;
  m.tensors = r->tensor_bytes;
  m.device = r->device_bytes;
  m.result = *std::move(r);
  return m;
}

// --attribute-deviation: per workload of `key`'s best records, the
// deviation from `reference` of the plan that uses only that workload's
// records; printed as a table, largest first. Workloads no layer of the
// model uses give the naive plan's deviation and are left out.
absl::Status AttributeDeviation(
    model_run::ModelRunner& runner, const std::string& name,
    const cli::LoadedModel& model, data_source::RecordReader& records,
    const std::string& key, const std::vector<std::vector<float>>& inputs,
    const std::map<std::string, base::NpyArray>& reference,
    double naive_deviation) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> best,
                             records.BestRecords(key));
  std::map<std::string, std::vector<tunefleet::v1::TuningRecord>> groups;
  for (const auto& r : best) {
    absl::StatusOr<templates::Workload> w =
        trial::WorkloadFromProto(r.workload());
    groups[w.ok() ? w->Canonical() : r.workload().ShortDebugString()].push_back(
        r);
  }
  std::vector<std::pair<double, std::vector<std::string>>> rows;
  int done = 0;
  for (const auto& [workload, group] : groups) {
    std::cerr << "model_e2e: " << name << " attribution " << ++done << "/"
              << groups.size() << ": " << workload << std::endl;
    OneWorkloadRecords one(records, group);
    TUNEFLEET_ASSIGN_OR_RETURN(Measured m, Measure(runner, model, one, key,
                                                   true, inputs, 1, 0, "off"));
    if (m.tuned + m.library == 0) continue;  // no layer of this model
    const double d = Deviation(Outputs(m.result), reference);
    std::string entries;
    for (const auto& r : group) {
      absl::StrAppend(&entries, entries.empty() ? "" : " ", r.template_name());
    }
    rows.push_back({d,
                    {workload, entries, absl::StrCat(m.tuned, "/", m.library),
                     absl::StrFormat("%.2e", d),
                     absl::StrFormat("%+.2e", d - naive_deviation)}});
  }
  // Largest first; a NaN (a plan whose outputs hold one) before all.
  auto rank = [](double d) {
    return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return rank(a.first) > rank(b.first);
  });
  std::vector<std::vector<std::string>> table;
  for (auto& row : rows) table.push_back(std::move(row.second));
  std::cout << name << ": deviation with one workload tuned "
            << "(the others naive; naive alone "
            << absl::StrFormat("%.2e", naive_deviation) << ")\n"
            << cli::FormatTable(
                   {"WORKLOAD", "TEMPLATES", "T/L", "MAX DEV", "VS NAIVE"},
                   table, {false, false, true, true, true});
  return absl::OkStatus();
}

// --save-dir: `arrays` as <dir>/<model>.<what>.<name>.npy. Errors: the
// first file that cannot be written.
absl::Status SaveArrays(const std::string& dir, const std::string& model,
                        const std::string& what,
                        const std::map<std::string, base::NpyArray>& arrays) {
  for (const auto& [name, array] : arrays) {
    TUNEFLEET_RETURN_IF_ERROR(base::WriteNpy(
        absl::StrCat(dir, "/", model, ".", what, ".", base::NpyFileName(name)),
        array));
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  CLI::App app{
      "model_e2e: whole models end to end on this device against "
      "ONNX Runtime's CPU latency"};
  std::string db = "tunefleet.db";
  std::string device_key;
  std::vector<std::string> model_flags;
  std::string only;
  int runs = 5, warmup = 1, ort_runs = 5, platform = 0, device = 0;
  bool no_naive = false, no_ort = false, json = false, attribute = false;
  std::string record = "both";
  std::string save_dir;
  app.add_option("--db", db, "tuning records (absent: every layer naive)")
      ->capture_default_str();
  app.add_option("--device-key", device_key,
                 "records of this key (default: the device's)");
  app.add_option("--model", model_flags,
                 "NAME=FILE@INPUT=D0,D1,... (repeat; default: PP-OCR cls, "
                 "det, rec)");
  app.add_option("--only", only, "comma-separated model names to run");
  app.add_option("--runs", runs, "measured runs per plan")
      ->capture_default_str();
  app.add_option("--warmup", warmup, "warm-up runs")->capture_default_str();
  app.add_option("--ort-runs", ort_runs, "ONNX Runtime's timed runs")
      ->capture_default_str();
  app.add_option("--platform", platform, "OpenCL platform")
      ->capture_default_str();
  app.add_option("--device", device, "OpenCL device")->capture_default_str();
  app.add_option("--record", record,
                 "the tuned plan's runs: both (plain and recorded, "
                 "interleaved), auto, on or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"both", "auto", "on", "off"}));
  app.add_flag("--no-naive", no_naive, "skip the naive plan");
  app.add_flag("--no-ort", no_ort, "skip ONNX Runtime");
  app.add_flag("--attribute-deviation", attribute,
               "per tuned workload, the deviation of a plan with only its "
               "records (the others naive): which layer moves the outputs");
  app.add_option("--save-dir", save_dir,
                 "write each model's input and its tuned, naive and ORT "
                 "outputs there as .npy files");
  app.add_flag("--json", json, "one JSON object on stdout");
  CLI11_PARSE(app, argc, argv);

  std::vector<ModelSpec> models;
  for (const std::string& flag : model_flags) {
    const size_t eq = flag.find('='), at = flag.find('@');
    if (eq == std::string::npos || at == std::string::npos || at < eq) {
      std::cerr << "model_e2e: --model " << flag
                << ": expected NAME=FILE@INPUT=DIMS\n";
      return 2;
    }
    models.push_back({flag.substr(0, eq), flag.substr(eq + 1, at - eq - 1),
                      flag.substr(at + 1)});
  }
  if (models.empty()) models = DefaultModels();
  if (!only.empty()) {
    const std::vector<std::string> keep = absl::StrSplit(only, ',');
    std::erase_if(models, [&](const ModelSpec& m) {
      return std::find(keep.begin(), keep.end(), m.name) == keep.end();
    });
  }

  absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> runner =
      model_run::OpenLocalRunner(platform, device);
  if (!runner.ok()) {
    std::cerr << "model_e2e: " << runner.status() << "\n";
    return 1;
  }
  const std::string key =
      device_key.empty() ? (*runner)->device().device_key : device_key;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<data_source::RecordReader> records;
  std::error_code ec;
  if (std::filesystem::exists(db, ec)) {
    auto opened = cli::OpenDatabase(db);
    if (!opened.ok()) {
      std::cerr << "model_e2e: " << opened.status() << "\n";
      return 1;
    }
    store = *std::move(opened);
    records = std::make_unique<dashboard::StoreDataSource>(store.get());
  } else {
    std::cerr << "model_e2e: no " << db
              << ": the tuned plan is the naive one\n";
    records = cli::MakeEmptyRecords();
  }
  std::optional<testing::OrtOracle> ort;
  std::string ort_note;
  if (!no_ort) {
    absl::StatusOr<testing::OrtOracle> found = testing::OrtOracle::Find();
    if (found.ok()) {
      ort = *found;
    } else {
      ort_note = std::string(found.status().message());
      std::cerr << "model_e2e: ONNX Runtime skipped: " << ort_note << "\n";
    }
  }

  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<std::string>> table;
  for (const ModelSpec& spec : models) {
    absl::StatusOr<cli::LoadedModel> model =
        cli::LoadModel(spec.file, {spec.shape});
    if (!model.ok()) {
      std::cerr << "model_e2e: " << spec.name << ": " << model.status() << "\n";
      return 1;
    }
    // One input per graph input: an image of text for an N=1 RGB input
    // (PP-OCR's: on noise det's output is near 0 everywhere), else
    // uniform values in [0, 1).
    std::vector<std::vector<float>> inputs;
    std::map<std::string, base::NpyArray> npy_inputs;
    uint64_t seed = 1;
    for (const std::string& name : model->graph.inputs) {
      const std::vector<int64_t>& dims = model->graph.tensors.at(name).dims;
      base::NpyArray a = dims.size() == 4 && dims[0] == 1 && dims[1] == 3
                             ? testing::OcrTextImage(dims[2], dims[3], seed++)
                             : testing::RandomNpy(dims, seed++);
      inputs.push_back(a.data);
      npy_inputs[name] = std::move(a);
    }
    std::optional<Measured> naive;
    if (!no_naive) {
      auto m = Measure(**runner, *model, *records, key, false, inputs, runs,
                       warmup, "auto");
      if (!m.ok()) {
        std::cerr << "model_e2e: " << spec.name << " naive: " << m.status()
                  << "\n";
        return 1;
      }
      naive = *std::move(m);
    }
    auto tuned = Measure(**runner, *model, *records, key, true, inputs, runs,
                         warmup, record);
    if (!tuned.ok()) {
      std::cerr << "model_e2e: " << spec.name << " tuned: " << tuned.status()
                << "\n";
      return 1;
    }
    std::optional<double> ort_ms;
    // Deviations from ORT's outputs (optimization level all, its default):
    // the tuned plan's, the naive plan's, and ORT's own with the graph run
    // as written (optimization disabled): the last is the model's noise
    // floor under fp32 reordering.
    std::optional<double> deviation, naive_deviation, ort_spread,
        as_written_deviation;
    std::string ort_runtime;
    std::optional<std::map<std::string, base::NpyArray>> ort_outputs,
        ort_unoptimized_outputs;
    if (ort.has_value()) {
      testing::OrtRunOptions options;
      options.runs = ort_runs;
      options.warmup = 1;
      auto r = ort->Run(spec.file, npy_inputs, options);
      if (!r.ok()) {
        std::cerr << "model_e2e: " << spec.name
                  << " ONNX Runtime: " << r.status() << "\n";
      } else {
        ort_ms = r->median_ms;
        ort_outputs = r->outputs;
        ort_runtime = r->runtime;
        deviation = Deviation(Outputs(tuned->result), r->outputs);
        if (naive) {
          naive_deviation = Deviation(Outputs(naive->result), r->outputs);
        }
        if (attribute) {
          absl::Status a = AttributeDeviation(**runner, spec.name, *model,
                                              *records, key, inputs, r->outputs,
                                              naive_deviation.value_or(0));
          if (!a.ok()) {
            std::cerr << "model_e2e: " << spec.name << " attribution: " << a
                      << "\n";
          }
        }
        testing::OrtRunOptions as_written;
        as_written.optimization = "disabled";
        auto w = ort->Run(spec.file, npy_inputs, as_written);
        if (w.ok()) {
          ort_spread = Deviation(w->outputs, r->outputs);
          as_written_deviation = Deviation(Outputs(tuned->result), w->outputs);
          ort_unoptimized_outputs = w->outputs;
        } else {
          std::cerr << "model_e2e: " << spec.name
                    << " ONNX Runtime (optimization disabled): " << w.status()
                    << "\n";
        }
      }
    }
    if (!save_dir.empty()) {
      std::error_code made;
      std::filesystem::create_directories(save_dir, made);
      absl::Status saved = SaveArrays(save_dir, spec.name, "input", npy_inputs);
      if (saved.ok()) {
        saved =
            SaveArrays(save_dir, spec.name, "tuned", Outputs(tuned->result));
      }
      if (saved.ok() && naive) {
        saved =
            SaveArrays(save_dir, spec.name, "naive", Outputs(naive->result));
      }
      if (saved.ok() && ort_outputs) {
        saved = SaveArrays(save_dir, spec.name, "ort", *ort_outputs);
      }
      if (saved.ok() && ort_unoptimized_outputs) {
        saved = SaveArrays(save_dir, spec.name, "ort-unoptimized",
                           *ort_unoptimized_outputs);
      }
      if (!saved.ok()) {
        std::cerr << "model_e2e: --save-dir: " << saved << "\n";
        return 1;
      }
    }
    const Measured& t = *tuned;
    auto fmt = [](const std::optional<double>& v, const char* f = "%.3f") {
      return v.has_value() ? absl::StrFormat(f, *v) : std::string("-");
    };
    const bool recorded = t.result.record == "on";
    const double commands = std::max(1, t.result.commands_per_run);
    auto ratio = [&](const std::optional<double>& ms) {
      return ms.has_value() && t.estimate_ms > 0
                 ? absl::StrFormat("%.2fx", *ms / t.estimate_ms)
                 : std::string("-");
    };
    // Plain and recorded side by side (one of them "-" where the mode was
    // not run).
    const std::optional<double> plain_ms =
        recorded ? t.plain_median_ms : std::optional<double>(t.median_ms);
    const std::optional<double> recorded_ms =
        recorded ? std::optional<double>(t.median_ms) : std::nullopt;
    const std::optional<double> plain_cpu =
        recorded ? t.plain_cpu_ms : std::optional<double>(t.cpu_ms);
    const std::optional<double> recorded_cpu =
        recorded ? std::optional<double>(t.cpu_ms) : std::nullopt;
    table.push_back(
        {spec.name, naive ? absl::StrFormat("%.3f", naive->median_ms) : "-",
         fmt(plain_ms), fmt(recorded_ms),
         absl::StrFormat("%.3f", t.on_device_ms),
         absl::StrFormat("%.3f%s", t.estimate_ms,
                         t.without_estimate > 0
                             ? absl::StrCat(" (", t.without_estimate, " n/a)")
                             : ""),
         ratio(plain_ms), ratio(recorded_ms),
         absl::StrCat(fmt(plain_cpu), " / ", fmt(recorded_cpu)),
         t.submit_ms > 0 ? absl::StrFormat("%.2f / %.2f",
                                           t.plain_submit_ms * 1e3 / commands,
                                           t.submit_ms * 1e3 / commands)
                         : "-",
         absl::StrCat(t.result.commands_per_run),
         absl::StrFormat("%.1f/%.1f MB (%.0f%%)", t.arena / 1e6,
                         t.tensors / 1e6,
                         t.tensors ? 100.0 * t.arena / t.tensors : 0.0),
         fmt(ort_ms), fmt(deviation, "%.2e"), fmt(naive_deviation, "%.2e"),
         fmt(ort_spread, "%.2e"), fmt(as_written_deviation, "%.2e"),
         absl::StrCat(t.tuned, "/", t.reference, "/", t.library)});
    nlohmann::json row = {
        {"model", spec.name},
        {"file", spec.file},
        {"input_shape", spec.shape},
        {"tuned",
         {{"latency_ms",
           {{"median", t.median_ms}, {"p10", t.p10_ms}, {"p90", t.p90_ms}}},
          {"estimated_ms", t.estimate_ms},
          {"layers_without_estimate", t.without_estimate},
          {"host_cpu_ms", t.cpu_ms},
          {"device_buffers_latency_ms", t.on_device_ms},
          {"record", t.result.record},
          {"record_note", t.result.record_note},
          {"plain",
           {{"latency_ms", t.plain_median_ms
                               ? nlohmann::json(*t.plain_median_ms)
                               : nlohmann::json()},
            {"host_cpu_ms", t.plain_cpu_ms ? nlohmann::json(*t.plain_cpu_ms)
                                           : nlohmann::json()},
            {"submit_cpu_ms", t.plain_submit_ms}}},
          {"submit_cpu_ms", t.submit_ms},
          {"entries",
           {{"tuned", t.tuned},
            {"reference", t.reference},
            {"library", t.library}}}}},
        {"arena_bytes", t.arena},
        {"tensor_bytes", t.tensors},
        {"peak_device_bytes", t.device},
        {"commands_per_run", t.result.commands_per_run},
        {"ort_cpu_ms", ort_ms ? nlohmann::json(*ort_ms) : nlohmann::json()},
        {"ort_runtime", ort_runtime},
        {"max_relative_deviation",
         deviation ? nlohmann::json(*deviation) : nlohmann::json()},
        {"naive_max_relative_deviation",
         naive_deviation ? nlohmann::json(*naive_deviation) : nlohmann::json()},
        {"ort_unoptimized_max_relative_deviation",
         ort_spread ? nlohmann::json(*ort_spread) : nlohmann::json()},
        {"ort_unoptimized_tuned_max_relative_deviation",
         as_written_deviation ? nlohmann::json(*as_written_deviation)
                              : nlohmann::json()}};
    if (naive) {
      row["naive"] = {{"latency_ms",
                       {{"median", naive->median_ms},
                        {"p10", naive->p10_ms},
                        {"p90", naive->p90_ms}}},
                      {"estimated_ms", naive->estimate_ms},
                      {"host_cpu_ms", naive->cpu_ms}};
    }
    rows.push_back(row);
  }
  if (json) {
    std::cout << nlohmann::json{{"device", (*runner)->device().device_name},
                                {"device_key", key},
                                {"runs", runs},
                                {"warmup", warmup},
                                {"ort_note", ort_note},
                                {"models", rows}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << absl::StrFormat(
      "model_e2e on %s (device key %s, records %s), %d runs after %d "
      "warm-up, medians\n",
      (*runner)->device().device_name, key, db, runs, warmup);
  std::cout << cli::FormatTable(
      {"MODEL", "NAIVE MS", "PLAIN MS", "REC MS", "ON-DEVICE MS", "ESTIMATE MS",
       "PLAIN/EST", "REC/EST", "HOST CPU MS P/R", "SUBMIT US/CMD P/R",
       "LAUNCHES", "ARENA/TENSORS", "ORT CPU MS", "MAX DEV", "NAIVE DEV",
       "ORT SPREAD", "DEV AS WRITTEN", "T/N/L"},
      table,
      {false, true, true, true, true, true, true, true, true, true, true, true,
       true, true, true, true, true, false});
  std::cout
      << "tuned plan: PLAIN every command enqueued, REC the recorded "
         "plan replayed (--record both: interleaved runs of one loaded "
         "plan); ON-DEVICE: the same with inputs and outputs in device buffers "
         "(no host copies); HOST CPU: the submitting thread per run; "
         "SUBMIT: "
         "RunBuffers alone (not waiting) per command; MAX DEV and NAIVE "
         "DEV: the tuned and naive plans' max|ours - ORT| / max|ORT|; "
         "ORT SPREAD: ORT's own with its graph optimizations off (the "
         "model's fp32 noise floor); DEV AS WRITTEN: the tuned plan's "
         "from ORT with its optimizations off (the graph as written, "
         "no BatchNormalization folded into Conv)\n";
  if (!ort_note.empty()) std::cout << "ONNX Runtime: " << ort_note << "\n";
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) {
  // A crash (in a driver, say) prints its stack before the process dies.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
  return tunefleet::bench::Main(argc, argv);
}
