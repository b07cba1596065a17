#include "cli/run_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/flags.h"
#include "base/npy.h"
#include "base/stats.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/model_plans.h"
#include "cli/server_source.h"
#include "data_source/data_source.h"
#include "model_run/model_runner.h"
#include "model_run_remote/remote_runner.h"
#include "model_runtime/plan_format.h"
#include "nlohmann/json.hpp"

namespace tunefleet::cli {
namespace {

constexpr char kDefaultDatabase[] = "tunefleet.db";

std::string Ms(double ns) { return absl::StrFormat("%.3f", ns / 1e6); }

std::string DimsText(const std::vector<int64_t>& dims) {
  return base::NpyShapeString(dims);
}

// The plan to run and where it came from.
struct PlanToRun {
  std::string plan_file, weights_file;
  tunefleet_tuned::Plan plan;  // decoded
  std::string source;          // "records of ...", "plan <path>"
  std::string runner;          // "this machine", "agent via <server>"
  plan_builder::PlanReport report;
  bool built = false;
};

// The records the plan is built from: --server, --db, or ./tunefleet.db
// when it exists, else none (every layer naive).
absl::StatusOr<std::unique_ptr<data_source::RecordReader>> OpenRecords(
    const RunOptions& o, std::string* where) {
  std::string db = o.db;
  if (o.server.empty() && db.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(kDefaultDatabase, ec)) {
      *where = absl::StrCat("no records (no ./", kDefaultDatabase,
                            "): every layer runs its naive kernel");
      return MakeEmptyRecords();
    }
    db = kDefaultDatabase;
  }
  *where = o.server.empty() ? absl::StrCat("records of ", db)
                            : absl::StrCat("records of server ", o.server);
  return OpenDataSource({o.server, o.connection, db, 0});
}

// Reads the plan of the model for `key` from an emitted library (--plan).
absl::StatusOr<PlanToRun> ReadPlan(const RunOptions& o, const LoadedModel& m,
                                   const std::string& key) {
  PlanPaths paths = PlanPathsIn(o.plan_dir, key, m.stem);
  std::error_code ec;
  if (!std::filesystem::exists(paths.plan, ec)) {
    const std::vector<std::string> keys = PlanKeysIn(o.plan_dir, m.stem);
    return absl::NotFoundError(absl::StrCat(
        "no plan of ", m.name, " for device key '", key, "' in ", o.plan_dir,
        " (looked for ", paths.plan, "); ",
        keys.empty()
            ? std::string("it has none of this model: emit it with "
                          "`tunefleet emit --onnx`")
            : absl::StrCat("it has plans for ", absl::StrJoin(keys, ", "),
                           ": pass --device-key to run one")));
  }
  PlanToRun p;
  std::string error;
  if (tunefleet_tuned::ReadWholeFile(paths.plan, &p.plan_file, &error) != 0 ||
      tunefleet_tuned::ReadWholeFile(paths.weights, &p.weights_file, &error) !=
          0) {
    return absl::NotFoundError(error);
  }
  p.source = absl::StrCat("plan ", paths.plan);
  return p;
}

// Checks the shapes given against the plan's (a plan is made at fixed
// input shapes).
absl::Status CheckShapes(const LoadedModel& m,
                         const tunefleet_tuned::PlanHeader& header) {
  for (const auto& [name, dims] : m.input_shapes) {
    bool found = false;
    for (const auto& [plan_name, plan_dims] : header.input_shapes) {
      if (plan_name != name) continue;
      found = true;
      if (plan_dims != dims) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input-shape ", name, "=", absl::StrJoin(dims, ","),
            ": the plan was made at ", name, "=", absl::StrJoin(plan_dims, ","),
            "; emit a plan at this shape or run without --plan"));
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape ", name, ": the plan has no input '", name, "'"));
    }
  }
  return absl::OkStatus();
}

// The inputs, in the plan's order: from --input files, else seeded
// uniform [-1, 1) values. Errors: INVALID_ARGUMENT naming the input and
// what is wrong (unknown name, shape, dtype: base/npy.h's message).
absl::StatusOr<std::vector<std::vector<float>>> ReadInputs(
    const RunOptions& o, const tunefleet_tuned::Plan& plan) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input ", spec, ": expected NAME=FILE.npy"));
    }
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::vector<std::string> names;
  for (int32_t t : plan.inputs) names.push_back(plan.tensors[t].name);
  for (const auto& [name, file] : files) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", name, "=", file, ": the model has no input '", name,
          "' (its inputs: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const tunefleet_tuned::PlanTensor& t = plan.tensors[plan.inputs[i]];
    auto file = files.find(t.name);
    if (file == files.end()) {
      std::mt19937 rng(static_cast<uint32_t>(o.seed * 7919 + i));
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      std::vector<float> values(t.elements);
      for (float& v : values) v = uniform(rng);
      inputs.push_back(std::move(values));
      continue;
    }
    absl::StatusOr<base::NpyArray> array = base::ReadNpy(file->second);
    if (!array.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input ", t.name, ": ", array.status().message()));
    }
    if (array->shape != t.dims) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input ", t.name, "=", file->second, ": shape ",
          DimsText(array->shape), ", the model's input '", t.name, "' is ",
          DimsText(t.dims), " at the plan's input shape"));
    }
    inputs.push_back(std::move(array->data));
  }
  return inputs;
}

// Writes every output as <dir>/<NpyFileName(name)>; on an error removes the
// files this call wrote, so that no partial set is left.
absl::StatusOr<std::map<std::string, std::string>> SaveOutputs(
    const std::string& dir, const model_run::RunResult& r) {
  std::map<std::string, std::string> written;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("--save-outputs ", dir, ": ", ec.message()));
  }
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    const std::string path =
        (std::filesystem::path(dir) / base::NpyFileName(r.output_names[o]))
            .string();
    base::NpyArray array{r.output_dims[o], r.outputs[o]};
    absl::Status s = base::WriteNpy(path, array);
    if (!s.ok()) {
      for (const auto& [name, file] : written) {
        std::filesystem::remove(file, ec);
      }
      return s;
    }
    written[r.output_names[o]] = path;
  }
  return written;
}

struct Figures {
  double median = 0, p10 = 0, p90 = 0, cpu = 0, submit = 0;
};

Figures Summarize(const std::vector<double>& latency,
                  const std::vector<double>& cpu,
                  const std::vector<double>& submit) {
  Figures f;
  if (latency.empty()) return f;
  f.median = base::Median(latency);
  f.p10 = base::NearestRankPercentile(latency, 10);
  f.p90 = base::NearestRankPercentile(latency, 90);
  f.cpu = base::Median(cpu);
  if (!submit.empty()) f.submit = base::Median(submit);
  return f;
}

Figures Summarize(const model_run::RunResult& r) {
  return Summarize(r.latency_ns, r.host_cpu_ns, r.submit_cpu_ns);
}

// The latency figures in ms, as --json writes them: {median, p10, p90}.
nlohmann::json LatencyMsJson(const Figures& f) {
  return {
      {"median", f.median / 1e6}, {"p10", f.p10 / 1e6}, {"p90", f.p90 / 1e6}};
}

// --record both on a device that recorded: plain figures beside the
// replayed ones.
bool HasBoth(const model_run::RunResult& r) {
  return !r.plain_latency_ns.empty() && r.record == "on";
}

// The layers by measured time, slowest first, at most `n`.
std::vector<const model_run::LayerTime*> Slowest(const model_run::RunResult& r,
                                                 size_t n) {
  std::vector<const model_run::LayerTime*> layers;
  for (const auto& l : r.layers) layers.push_back(&l);
  std::stable_sort(layers.begin(), layers.end(),
                   [](const auto* a, const auto* b) {
                     return a->measured_ns > b->measured_ns;
                   });
  if (layers.size() > n) layers.resize(n);
  return layers;
}

double LayerSum(const model_run::RunResult& r) {
  double sum = 0;
  for (const auto& l : r.layers) sum += l.measured_ns;
  return sum;
}

void PrintText(const RunOptions& o, const LoadedModel& m, const PlanToRun& p,
               const model_run::RunResult& r,
               const std::map<std::string, std::string>& saved) {
  const Figures f = Summarize(r);
  int tuned = 0, reference = 0, library = 0;
  for (const auto& l : r.layers) {
    tuned += l.entry == "tuned";
    reference += l.entry == "reference";
    library += l.entry == "library";
  }
  std::cout << absl::StrFormat(
      "%s on %s (device key %s), %s\n  %zu layers: %d tuned, %d naive, %d "
      "library calls; %d commands per run%s\n  recording %s\n",
      m.name, r.device.device_name, p.plan.header.device_key,
      absl::StrCat(p.source, "; run on ", p.runner), r.layers.size(), tuned,
      reference, library, r.commands_per_run,
      r.image_views + r.image_fills == 0
          ? ""
          : absl::StrFormat("; tensors read through images: %d viewed in "
                            "their own memory, %d copied in per run",
                            r.image_views, r.image_fills),
      // The runtime's note on "off" starts with the mode itself.
      absl::StartsWith(r.record_note, r.record)
          ? r.record_note
          : absl::StrCat(r.record, ": ", r.record_note));
  if (HasBoth(r)) {
    // Plain and recorded runs side by side.
    const Figures plain = Summarize(r.plain_latency_ns, r.plain_host_cpu_ns,
                                    r.plain_submit_cpu_ns);
    auto ratio = [](double a, double b) {
      return b > 0 ? absl::StrFormat("%.2fx", a / b) : std::string("-");
    };
    const double commands = std::max(1, r.commands_per_run);
    std::vector<std::vector<std::string>> rows = {
        {"latency median ms", Ms(plain.median), Ms(f.median),
         ratio(f.median, plain.median)},
        {"latency p10 ms", Ms(plain.p10), Ms(f.p10), ratio(f.p10, plain.p10)},
        {"latency p90 ms", Ms(plain.p90), Ms(f.p90), ratio(f.p90, plain.p90)},
        {"host CPU per run ms", Ms(plain.cpu), Ms(f.cpu),
         ratio(f.cpu, plain.cpu)},
        {"submit CPU per run ms", Ms(plain.submit), Ms(f.submit),
         ratio(f.submit, plain.submit)},
        {"submit CPU per command us",
         absl::StrFormat("%.2f", plain.submit / commands / 1e3),
         absl::StrFormat("%.2f", f.submit / commands / 1e3), ""},
    };
    if (r.estimate_ns > 0) {
      rows.push_back({"measured/estimated",
                      absl::StrFormat("%.2f", plain.median / r.estimate_ns),
                      absl::StrFormat("%.2f", f.median / r.estimate_ns), ""});
    }
    std::cout << absl::StrFormat(
        "plain and recorded runs, interleaved (%d each after %d warm-up; "
        "submit: RunBuffers alone, not waiting):\n",
        o.runs, o.warmup);
    std::cout << FormatTable({"", "PLAIN", "RECORDED", "REC/PLAIN"}, rows,
                             {false, true, true, true});
  }
  std::cout << absl::StrFormat(
      "latency (%d runs after %d warm-up%s): median %s ms, p10 %s ms, p90 %s "
      "ms\n",
      o.runs, o.warmup, r.record == "on" ? ", recorded" : "", Ms(f.median),
      Ms(f.p10), Ms(f.p90));
  std::string estimate = absl::StrCat("estimated ", Ms(r.estimate_ns),
                                      " ms (sum of the records' kernel times");
  if (r.layers_without_estimate > 0) {
    absl::StrAppend(&estimate, "; ", r.layers_without_estimate,
                    " layers have no measured time and add nothing");
  }
  absl::StrAppend(&estimate, ")");
  if (r.estimate_ns > 0) {
    absl::StrAppendFormat(&estimate, ", measured/estimated %.2fx",
                          f.median / r.estimate_ns);
  }
  std::cout << "  measured " << Ms(f.median) << " ms, " << estimate << "\n";
  if (!r.device_buffers_latency_ns.empty()) {
    const Figures d = Summarize(r.device_buffers_latency_ns,
                                r.device_buffers_submit_cpu_ns, {});
    std::cout << absl::StrFormat(
        "  on the device (inputs and outputs in device buffers, no host "
        "copies): median %s ms, p10 %s ms, p90 %s ms; submitting %s ms of "
        "CPU\n",
        Ms(d.median), Ms(d.p10), Ms(d.p90), Ms(d.cpu));
  }
  std::cout << absl::StrFormat(
      "host CPU per run: %s ms (median; the submitting thread)\n", Ms(f.cpu));
  std::cout << absl::StrFormat(
      "device memory: %d bytes (arena %d bytes = %.1f%% of the %d bytes of "
      "all tensors%s; weights %d bytes)\n",
      r.device_bytes, r.arena_bytes,
      r.tensor_bytes > 0 ? 100.0 * r.arena_bytes / r.tensor_bytes : 0.0,
      r.tensor_bytes, r.replanned ? ", planned again at load" : "",
      r.weights_bytes);
  const double total = LayerSum(r);
  if (total > 0) {
    std::cout << absl::StrFormat(
        "slowest layers (device time, median of %d profiled runs; all "
        "layers %s ms):\n",
        o.profiled_runs, Ms(total));
    std::vector<std::vector<std::string>> rows;
    for (const model_run::LayerTime* l : Slowest(r, 10)) {
      rows.push_back({absl::StrFormat("%.1f%%", 100 * l->measured_ns / total),
                      Ms(l->measured_ns),
                      l->estimate_ns >= 0 ? Ms(l->estimate_ns) : "-", l->label,
                      l->entry, l->workload});
    }
    std::cout << FormatTable(
        {"SHARE", "MS", "EST MS", "LAYER", "ENTRY", "WORKLOAD"}, rows,
        {true, true, true, false, false, false});
  }
  if (o.describe) std::cout << r.describe;
  for (size_t i = 0; i < r.output_names.size(); ++i) {
    auto it = saved.find(r.output_names[i]);
    std::cout << "output " << r.output_names[i] << " "
              << DimsText(r.output_dims[i])
              << (it != saved.end() ? " -> " + it->second : std::string())
              << "\n";
  }
}

nlohmann::json Json(const RunOptions& o, const LoadedModel& m,
                    const PlanToRun& p, const model_run::RunResult& r,
                    const std::map<std::string, std::string>& saved) {
  const Figures f = Summarize(r);
  nlohmann::json layers = nlohmann::json::array();
  const double total = LayerSum(r);
  // Without profiled runs there are no layer times to rank.
  for (const model_run::LayerTime* l : Slowest(r, total > 0 ? 10 : 0)) {
    layers.push_back(
        {{"layer", l->label},
         {"workload_key", l->workload},
         {"entry", l->entry},
         {"config", l->config},
         {"measured_ms", l->measured_ns / 1e6},
         {"estimated_ms", l->estimate_ns >= 0
                              ? nlohmann::json(l->estimate_ns / 1e6)
                              : nlohmann::json()},
         {"share", total > 0 ? l->measured_ns / total : 0.0}});
  }
  nlohmann::json outputs = nlohmann::json::object();
  for (const auto& [name, file] : saved) outputs[name] = file;
  nlohmann::json shapes = nlohmann::json::object();
  for (size_t i = 0; i < r.output_names.size(); ++i) {
    shapes[r.output_names[i]] = r.output_dims[i];
  }
  int tuned = 0, reference = 0, library = 0;
  for (const auto& l : r.layers) {
    tuned += l.entry == "tuned";
    reference += l.entry == "reference";
    library += l.entry == "library";
  }
  nlohmann::json out = {
      {"model", m.name},
      {"model_sha256", m.sha256},
      {"device_key", p.plan.header.device_key},
      {"device_name", r.device.device_name},
      {"plan", p.source},
      {"run_on", p.runner},
      {"runs", o.runs},
      {"warmup", o.warmup},
      {"latency_ms", LatencyMsJson(f)},
      {"estimated_ms", r.estimate_ns / 1e6},
      {"layers_without_estimate", r.layers_without_estimate},
      {"host_cpu_ms", f.cpu / 1e6},
      {"peak_device_bytes", r.device_bytes},
      {"arena_bytes", r.arena_bytes},
      {"tensor_bytes", r.tensor_bytes},
      {"weights_bytes", r.weights_bytes},
      {"record", r.record},
      {"record_extension", r.record_extension},
      {"record_note", r.record_note},
      {"recorded_lists", r.recorded_lists},
      {"layers", r.layers.size()},
      {"entries",
       {{"tuned", tuned}, {"reference", reference}, {"library", library}}},
      {"commands_per_run", r.commands_per_run},
      {"image_views", r.image_views},
      {"image_fills", r.image_fills},
      {"slowest_layers", layers},
      {"output_shapes", shapes},
      {"outputs", outputs}};
  if (!r.device_buffers_latency_ns.empty()) {
    const Figures d = Summarize(r.device_buffers_latency_ns,
                                r.device_buffers_submit_cpu_ns, {});
    out["device_buffers_latency_ms"] = LatencyMsJson(d);
    out["device_buffers_submit_cpu_ms"] = d.cpu / 1e6;
  }
  if (HasBoth(r)) {
    auto figures = [&](const Figures& x) {
      return nlohmann::json{{"latency_ms", LatencyMsJson(x)},
                            {"host_cpu_ms", x.cpu / 1e6},
                            {"submit_cpu_ms", x.submit / 1e6}};
    };
    out["plain"] = figures(Summarize(r.plain_latency_ns, r.plain_host_cpu_ns,
                                     r.plain_submit_cpu_ns));
    out["recorded"] = figures(f);
  }
  return out;
}

}  // namespace

void AddRunOptions(CLI::App* cmd, RunOptions& o) {
  AddOnnxInputOptions(cmd, o.onnx, o.input_shapes);
  CLI::Option* db = cmd->add_option(
      "--db", o.db,
      "database of tuning records (default: ./tunefleet.db when it exists, "
      "else no records: every layer runs its naive kernel)");
  CLI::Option* server = cmd->add_option(
      "--server", o.server,
      "read the tuning records from a tunefleet-server (HOST:PORT) and run "
      "the model on a connected agent of the device key through it (a "
      "token of role tuner)");
  cmd->add_flag("--local", o.local,
                "with --server: run on this machine's OpenCL device instead "
                "of an agent")
      ->needs(server);
  CLI::Option* plan = cmd->add_option(
      "--plan", o.plan_dir,
      "run the plan an emitted library holds (the --out of `tunefleet emit "
      "--onnx`) instead of building one from records");
  db->excludes(server)->excludes(plan);
  server->excludes(plan);
  AddConnectionFlags(cmd, o.connection);
  cmd->add_option("--device-key", o.device_key,
                  "the device key whose records or plan to use (default: "
                  "this device's key, as tunefleet-agent names it)");
  cmd->add_option("--input", o.inputs,
                  "an input's values, NAME=FILE.npy (float32, the input's "
                  "shape; repeat for several; default: seeded random "
                  "values in [-1, 1))");
  cmd->add_option("--save-outputs", o.save_outputs,
                  "write each output to DIR/<output name>.npy");
  cmd->add_option("--save-plan", o.save_plan,
                  "also write the plan run to DIR/plans/<key>/<model>.tfplan "
                  "and .tfweights (what `emit --onnx` writes; `run --plan "
                  "DIR` runs it again)");
  base::AddRangeOption(cmd, "--runs", o.runs, "measured runs", 1, 100000);
  base::AddRangeOption(cmd, "--warmup", o.warmup,
                       "runs before the measured ones", 0, 100000);
  base::AddRangeOption(
      cmd, "--profiled-runs", o.profiled_runs,
      "extra runs with profiling events for the per-layer times", 0, 100000);
  cmd->add_option("--seed", o.seed, "seed of the random inputs")
      ->capture_default_str();
  cmd->add_flag("--naive", o.naive,
                "run every layer's naive reference kernel (the untuned "
                "baseline)");
  cmd->add_flag("--no-library", o.no_library,
                "never call a vendor library (CLBlast), even where its "
                "record is fastest");
  cmd->add_flag("--describe", o.describe, "print every layer of the plan");
  cmd->add_option(
         "--record", o.record,
         "record the whole plan at load and replay it per run: auto (where "
         "the device lists cl_khr_command_buffer or "
         "cl_qcom_recordable_queues), on (fail where it cannot), off (enqueue "
         "every command), both (plain and recorded runs side by side)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off", "both"}));
  cmd->add_option(
         "--image-views", o.image_views,
         "a tensor that a layer reads through an image: on (view its own "
         "memory as the image where the device lists "
         "cl_khr_image2d_from_buffer, no copy per run), off (copy it into an "
         "image before the layer)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--platform", o.platform, "OpenCL platform index")
      ->capture_default_str();
  cmd->add_option("--device", o.device, "OpenCL device index")
      ->capture_default_str();
  cmd->add_flag("--json", o.json, "print a JSON object on stdout");
}

// The device the plan runs on: a connected agent of the key through
// --server, or this machine's (--platform, --device).
absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> OpenRunner(
    const RunOptions& o, std::string* where) {
  if (o.server.empty() || o.local) {
    *where = "this machine";
    return model_run::OpenLocalRunner(o.platform, o.device);
  }
  absl::StatusOr<client::ServerConnection> server =
      client::ConnectionTo(o.server, o.connection);
  if (!server.ok()) return server.status();
  model_run_remote::RemoteRunnerOptions options;
  options.device_key = o.device_key;
  absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> runner =
      model_run_remote::OpenRemoteRunner(*server, options);
  if (runner.ok()) {
    *where =
        absl::StrCat("an agent of device key ", (*runner)->device().device_key,
                     " via server ", o.server);
  }
  return runner;
}

int RunRun(const RunOptions& o) {
  std::string run_on;
  absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> runner =
      OpenRunner(o, &run_on);
  if (!runner.ok()) return ReportError("run", runner.status());
  const model_run::RunnerDevice& device = (*runner)->device();
  const std::string key =
      o.device_key.empty() ? device.device_key : o.device_key;

  PlanToRun p;
  absl::StatusOr<LoadedModel> model;
  if (!o.plan_dir.empty()) {
    model = HashModel(o.onnx, o.input_shapes);
    if (!model.ok()) return ReportError("run", model.status());
    absl::StatusOr<PlanToRun> read = ReadPlan(o, *model, key);
    if (!read.ok()) return ReportError("run", read.status());
    p = *std::move(read);
  } else {
    model = LoadModel(o.onnx, o.input_shapes);
    if (!model.ok()) return ReportError("run", model.status());
    std::string where;
    absl::StatusOr<std::unique_ptr<data_source::RecordReader>> records =
        OpenRecords(o, &where);
    if (!records.ok()) return ReportError("run", records.status());
    plan_builder::PlanOptions options;
    options.device_key = key;
    options.device_name = device.device_name;
    options.device_vendor = device.device_vendor;
    options.tuned = !o.naive;
    options.include_library =
        !o.no_library &&
        std::find(device.libraries.begin(), device.libraries.end(),
                  "clblast") != device.libraries.end();
    absl::StatusOr<BuiltPlan> built =
        BuildModelPlan(*model, **records, options);
    if (!built.ok()) return ReportError("run", built.status());
    p.plan_file = std::move(built->plan_file);
    p.weights_file = std::move(built->weights_file);
    p.report = built->report;
    p.built = true;
    p.source = o.naive ? "the naive plan" : "a plan from " + where;
  }
  p.runner = run_on;
  // Decoded here too, so that a bad plan or input is refused before the
  // device is touched and the inputs can be checked by name and shape.
  std::string error;
  if (int32_t code = tunefleet_tuned::DecodePlan(
          p.plan_file, p.weights_file, {model->sha256, key}, &p.plan, &error);
      code != 0) {
    return ReportError("run", absl::InvalidArgumentError(error));
  }
  if (absl::Status s = CheckShapes(*model, p.plan.header); !s.ok()) {
    return ReportError("run", s);
  }
  absl::StatusOr<std::vector<std::vector<float>>> inputs =
      ReadInputs(o, p.plan);
  if (!inputs.ok()) return ReportError("run", inputs.status());

  model_run::RunRequest request;
  request.plan_file = p.plan_file;
  request.weights_file = p.weights_file;
  request.model_sha256 = model->sha256;
  request.device_key = key;
  request.inputs = *std::move(inputs);
  request.runs = o.runs;
  request.warmup = o.warmup;
  request.profiled_runs = o.profiled_runs;
  request.record = o.record;
  request.image_views = o.image_views == "on";
  if (!o.device_key.empty() && o.device_key != device.device_key) {
    // Another key's plan on this device: its kernels may still run.
    std::cerr << "tunefleet run: note: running device key '" << o.device_key
              << "' on this device, whose key is '" << device.device_key
              << "'\n";
  }
  absl::StatusOr<model_run::RunResult> result = (*runner)->Run(request);
  if (!result.ok()) return ReportError("run", result.status());
  if (!o.save_plan.empty()) {
    const PlanPaths paths = PlanPathsIn(o.save_plan, key, model->stem);
    std::error_code ec;
    std::filesystem::create_directories(
        std::filesystem::path(paths.plan).parent_path(), ec);
    absl::Status s = base::WriteFileAtomically(paths.weights, p.weights_file);
    if (s.ok()) s = base::WriteFileAtomically(paths.plan, p.plan_file);
    if (!s.ok()) return ReportError("run", s);
  }
  std::map<std::string, std::string> saved;
  if (!o.save_outputs.empty()) {
    absl::StatusOr<std::map<std::string, std::string>> written =
        SaveOutputs(o.save_outputs, *result);
    if (!written.ok()) return ReportError("run", written.status());
    saved = *std::move(written);
  }
  if (o.json) {
    std::cout << JsonText(Json(o, *model, p, *result, saved)) << "\n";
  } else {
    PrintText(o, *model, p, *result, saved);
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
