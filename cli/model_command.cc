#include "cli/model_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/library_streaks.h"
#include "cli/progress.h"
#include "cli/stop_signal.h"
#include "kernels_templates/registry.h"
#include "proto/names.h"

namespace tunefleet::cli {
namespace {

using onnx_import::ModelTask;
using onnx_import::ModelTasks;

nlohmann::json TasksJson(const std::string& onnx,
                         const onnx_import::ModelTasks& m) {
  nlohmann::json tasks = nlohmann::json::array();
  double total = 0;
  for (const onnx_import::ModelTask& t : m.tasks) {
    tasks.push_back({{"op", t.workload.op()},
                     {"workload", t.workload.Canonical()},
                     {"shape", t.workload.ShapeString()},
                     {"count", t.count},
                     {"flops", t.flops},
                     {"template", t.template_name}});
    total += t.flops * t.count;
  }
  nlohmann::json unsupported = nlohmann::json::array();
  for (const auto& u : m.unsupported) {
    unsupported.push_back(
        {{"op_type", u.op_type}, {"count", u.count}, {"reason", u.reason}});
  }
  nlohmann::json inputs = nlohmann::json::object();
  for (const auto& [name, dims] : m.input_shapes) inputs[name] = dims;
  return {{"model", onnx},          {"nodes", m.nodes},
          {"input_shapes", inputs}, {"tasks", tasks},
          {"total_flops", total},   {"unsupported", unsupported}};
}

void PrintTasks(const std::string& onnx, const onnx_import::ModelTasks& m) {
  double total = 0;
  for (const onnx_import::ModelTask& t : m.tasks) total += t.flops * t.count;
  std::cout << absl::StrFormat(
      "%s: %d nodes, %zu distinct tasks, %.1f MFLOP per inference\n", onnx,
      m.nodes, m.tasks.size(), total / 1e6);
  std::cout << absl::StrFormat("%3s %-17s %5s %9s %9s  %s\n", "#", "OP",
                               "COUNT", "MFLOP", "TOTAL", "SHAPE");
  int i = 0;
  for (const onnx_import::ModelTask& t : m.tasks) {
    std::cout << absl::StrFormat(
        "%3d %-17s %5d %9.3f %9.3f  %s\n", ++i, t.workload.op(), t.count,
        t.flops / 1e6, t.flops * t.count / 1e6, t.workload.ShapeString());
  }
  if (!m.unsupported.empty()) {
    std::cout << "not tuned:\n";
    for (const auto& u : m.unsupported) {
      std::cout << absl::StrFormat("    %-18s %4d  (%s)\n", u.op_type, u.count,
                                   u.reason);
    }
  }
}

// One tuned task of a model run: its generated template's job and the
// jobs of the library templates tried beside it.
struct TaskOutcome {
  const onnx_import::ModelTask* task = nullptr;
  tunefleet::v1::JobProgress last;  // the generated template's job
  double seconds = 0;
  // Library templates that ran (their space had configs on the device).
  std::vector<std::pair<std::string, tunefleet::v1::JobProgress>> library;
};

// What an emitted library runs for a task and its time in ms: the fastest
// of the tuned kernel, a library call and the naive kernel
// (emitter/emitter.h); {"", 0} when nothing was measured.
std::pair<std::string, double> Deployed(const TaskOutcome& r) {
  std::pair<std::string, double> best{"", 0};
  auto consider = [&](const std::string& what, double ms) {
    if (ms > 0 && (best.second == 0 || ms < best.second)) best = {what, ms};
  };
  if (r.last.has_best()) consider("tuned", r.last.best().time_ns() / 1e6);
  for (const auto& [name, p] : r.library) {
    if (p.has_best()) consider(name, p.best().time_ns() / 1e6);
  }
  consider("reference", r.last.reference_time_ns() / 1e6);
  return best;
}

nlohmann::json ModelTuneJson(const TuneOptions& o,
                             const std::vector<TaskOutcome>& outcomes,
                             double elapsed_s) {
  nlohmann::json tasks = nlohmann::json::array();
  double before = 0, after = 0;
  bool complete = true;
  for (const TaskOutcome& r : outcomes) {
    const auto& p = r.last;
    const double ref_ms = p.reference_time_ns() / 1e6;
    const double best_ms = p.has_best() ? p.best().time_ns() / 1e6 : 0;
    nlohmann::json t = {{"workload", r.task->workload.Canonical()},
                        {"count", r.task->count},
                        {"flops", r.task->flops},
                        {"job_id", p.job_id()},
                        {"state", proto::JobStateName(p.state())},
                        {"trials", p.trials_done()},
                        {"tune_s", r.seconds}};
    if (p.has_best()) {
      t["best"] = {{"template", p.best().template_name()},
                   {"config", ConfigJson(p.best().config())},
                   {"time_ms", best_ms},
                   {"gflops", p.best().gflops()}};
    }
    if (ref_ms > 0) {
      t["reference"] = {{"time_ms", ref_ms},
                        {"gflops", r.task->flops / (ref_ms * 1e6)}};
    }
    nlohmann::json library = nlohmann::json::array();
    for (const auto& [name, lp] : r.library) {
      nlohmann::json l = {{"template", name},
                          {"job_id", lp.job_id()},
                          {"trials", lp.trials_done()}};
      if (lp.has_best()) {
        l["time_ms"] = lp.best().time_ns() / 1e6;
        l["config"] = ConfigJson(lp.best().config());
      }
      library.push_back(l);
    }
    t["library"] = library;
    const auto [deployed, deployed_ms] = Deployed(r);
    if (p.has_best() && ref_ms > 0) {
      t["speedup_vs_reference"] = ref_ms / best_ms;
      // What an emitted library runs: the fastest of them.
      t["deployed"] = deployed;
      before += ref_ms * r.task->count;
      after += deployed_ms * r.task->count;
    } else {
      complete = false;
    }
    tasks.push_back(t);
  }
  LibraryStreaks streaks;  // replayed: which library templates were dropped
  for (const TaskOutcome& r : outcomes) streaks.Update(r.last, r.library);
  nlohmann::json j = {{"model", o.onnx},
                      {"tasks", tasks},
                      {"trials_per_task", o.trials_per_task},
                      {"library_candidates", !o.no_library},
                      {"library_dropped", streaks.Dropped()},
                      {"elapsed_s", elapsed_s},
                      {"latency_ms", {{"naive", before}, {"tuned", after}}},
                      {"latency_complete", complete}};
  if (o.server.empty()) j["database"] = o.db;
  return j;
}

}  // namespace

absl::StatusOr<onnx_import::ModelTasks> LoadModelTasks(
    const std::string& onnx, const std::vector<std::string>& input_shapes) {
  onnx_import::InputShapes shapes;
  for (const std::string& s : input_shapes) {
    if (absl::Status st = onnx_import::ParseInputShape(s, &shapes); !st.ok()) {
      return st;
    }
  }
  return onnx_import::ImportOnnx(onnx, shapes);
}

CLI::App* AddTasksCommand(CLI::App& app, TasksOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "tasks", "list the distinct tuning tasks of an ONNX model");
  cmd->add_option("--onnx", o.onnx, "ONNX model file")->required();
  cmd->add_option("--input-shape", o.input_shapes,
                  "dims of an input, NAME=D1,D2,... (repeat for several; "
                  "needed for inputs with dynamic dims)");
  cmd->add_flag("--json", o.json, "print a JSON object on stdout");
  return cmd;
}

int RunTasks(const TasksOptions& o) {
  absl::StatusOr<onnx_import::ModelTasks> m =
      LoadModelTasks(o.onnx, o.input_shapes);
  if (!m.ok()) return ReportError("tasks", m.status());
  if (o.json) {
    std::cout << TasksJson(o.onnx, *m).dump(2) << "\n";
  } else {
    PrintTasks(o.onnx, *m);
  }
  return kExitOk;
}

std::string TaskLine(int index, size_t total, size_t workload_width,
                     const onnx_import::ModelTask& task,
                     const tunefleet::v1::JobProgress& p, double seconds) {
  std::string line = absl::StrFormat("[%2d/%zu] %-*s x%-2d ", index, total,
                                     static_cast<int>(workload_width),
                                     task.workload.Canonical(), task.count);
  if (p.has_best()) {
    absl::StrAppendFormat(&line, "%7.2f GFLOP/s %8.4f ms", p.best().gflops(),
                          p.best().time_ns() / 1e6);
    if (p.reference_time_ns() > 0) {
      absl::StrAppendFormat(
          &line, "  naive %7.2f GFLOP/s, tuned %s",
          task.flops / p.reference_time_ns(),
          RelativeSpeed(p.reference_time_ns(), p.best().time_ns()));
    }
  } else {
    absl::StrAppend(&line, proto::JobStateName(p.state()), " ", p.message());
  }
  absl::StrAppendFormat(&line, "  (%u trials, %.0f s)", p.trials_done(),
                        seconds);
  return line;
}

namespace {

// The library templates of `op` (registry order): calls into vendor
// libraries, tried beside the op's generated template.
std::vector<std::string> LibraryTemplates(const std::string& op) {
  std::vector<std::string> names;
  for (const templates::KernelTemplate* t : templates::AllTemplates()) {
    if (t->op() == op && t->is_library()) names.emplace_back(t->name());
  }
  return names;
}

// Runs the library templates' jobs of a task, each with what is left of
// `budget` (their spaces are small: a job ends when its space does);
// returns the trials they spent. A template the server finds no config of
// (the agents lack the library, or it does not run the workload) is left
// out, as is one `streaks` finds not worth trying. Errors: any other
// refusal or a lost job.
absl::StatusOr<uint32_t> TuneLibraryCandidates(
    const TuneOptions& o, const client::ServerConnection& server,
    CurrentJob& current, const onnx_import::ModelTask& task, uint32_t budget,
    const LibraryStreaks& streaks, TaskOutcome& outcome) {
  uint32_t spent = 0;
  for (const std::string& name : LibraryTemplates(task.workload.op())) {
    if (!streaks.Worth(name)) continue;
    // Keep at least one trial for the generated template.
    if (spent + 1 >= budget) break;
    tunefleet::v1::SubmitJobRequest request =
        JobRequest(o, task.workload, budget - spent - 1);
    request.set_template_name(name);
    request.set_skip_reference(true);  // the generated template's job times it
    absl::StatusOr<JobOutcome> job = RunJob(
        server, request,
        [&](const tunefleet::v1::SubmitJobResponse& submitted) {
          current.Set(submitted.job_id());
        },
        nullptr);
    if (absl::IsFailedPrecondition(job.status()) ||
        absl::IsInvalidArgument(job.status())) {
      continue;  // no config of it here
    }
    if (!job.ok()) return job.status();
    spent += job->last.trials_done();
    outcome.library.emplace_back(name, job->last);
  }
  return spent;
}

// Tunes the tasks one job after the other until all are done or `stop`
// fires: per task, its library candidates (unless --no-library), then its
// generated template with what is left of --trials-per-task. Errors: the
// first job the server refuses or loses.
absl::StatusOr<std::vector<TaskOutcome>> TuneTasks(
    const TuneOptions& o, const client::ServerConnection& server,
    const StopSignal& stop, CurrentJob& current,
    const std::vector<onnx_import::ModelTask>& tasks) {
  size_t workload_width = 0;
  for (const onnx_import::ModelTask& task : tasks) {
    workload_width = std::max(workload_width, task.workload.Canonical().size());
  }
  std::vector<TaskOutcome> outcomes;
  LibraryStreaks streaks;
  for (const onnx_import::ModelTask& task : tasks) {
    if (stop.fired()) break;
    const auto task_start = std::chrono::steady_clock::now();
    TaskOutcome outcome{&task, {}, 0, {}};
    uint32_t library_trials = 0;
    if (!o.no_library) {
      absl::StatusOr<uint32_t> spent = TuneLibraryCandidates(
          o, server, current, task, o.trials_per_task, streaks, outcome);
      if (!spent.ok()) return spent.status();
      library_trials = *spent;
    }
    absl::StatusOr<JobOutcome> job = RunJob(
        server,
        JobRequest(o, task.workload,
                   std::max<uint32_t>(1, o.trials_per_task - library_trials)),
        [&](const tunefleet::v1::SubmitJobResponse& submitted) {
          current.Set(submitted.job_id());
        },
        nullptr);
    if (!job.ok()) return job.status();
    outcome.last = job->last;
    outcome.seconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - task_start)
                          .count();
    streaks.Update(outcome.last, outcome.library);
    outcomes.push_back(std::move(outcome));
    if (!o.quiet) {
      std::fprintf(stderr, "%s\n",
                   TaskLine(static_cast<int>(outcomes.size()), tasks.size(),
                            workload_width, task, outcomes.back().last,
                            outcomes.back().seconds)
                       .c_str());
      for (const auto& [name, p] : outcomes.back().library) {
        if (!p.has_best()) continue;
        std::fprintf(stderr, "        %s: %.4f ms (%u trials)\n", name.c_str(),
                     p.best().time_ns() / 1e6, p.trials_done());
      }
    }
  }
  return outcomes;
}

// The run's summary: tasks tuned, the model's estimated latency before and
// after, what was not tuned, where the records are.
void PrintModelSummary(const TuneOptions& o, const onnx_import::ModelTasks& m,
                       size_t tuned, double elapsed, const nlohmann::json& j) {
  const double naive = j["latency_ms"]["naive"].get<double>();
  const double after = j["latency_ms"]["tuned"].get<double>();
  std::cout << absl::StrFormat(
      "%s: %zu of %zu tasks tuned in %.0f s\n"
      "  estimated latency (sum of kernel time x count): naive %.3f ms, "
      "tuned %.3f ms (%.1fx)%s\n"
      "  (per task the fastest of the tuned kernel, %s and the naive "
      "kernel, as emitted libraries run them)\n",
      o.onnx, tuned, m.tasks.size(), elapsed, naive, after,
      after > 0 ? naive / after : 0.0,
      j["latency_complete"].get<bool>() ? "" : " (some tasks have no figure)",
      o.no_library ? "no library call (--no-library)"
                   : "the library calls tried");
  if (!m.unsupported.empty()) {
    std::vector<std::string> ops;
    for (const auto& u : m.unsupported) {
      ops.push_back(absl::StrCat(u.op_type, " x", u.count));
    }
    std::cout << "  not tuned: " << absl::StrJoin(ops, ", ") << "\n";
  }
  if (!j["library_dropped"].empty()) {
    std::cout << "  library templates no longer tried after losing by more "
                 "than "
              << LibraryStreaks::kLosingFactor << "x on "
              << LibraryStreaks::kLosingStreak << " tasks in a row: "
              << absl::StrJoin(
                     j["library_dropped"].get<std::vector<std::string>>(), ", ")
              << "\n";
  }
  if (o.server.empty()) std::cout << "  records in " << o.db << "\n";
}

}  // namespace

int RunModelTune(const TuneOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<onnx_import::ModelTasks> m =
      LoadModelTasks(o.onnx, o.input_shapes);
  if (!m.ok()) return ReportError("tune", m.status());
  StopSignal stop(nullptr);
  std::unique_ptr<EmbeddedFleet> fleet;
  CurrentJob current;
  absl::StatusOr<client::ServerConnection> server =
      StartTune(o, stop, &fleet, &current);
  if (!server.ok()) return ReportError("tune", server.status());
  if (!o.quiet) {
    std::fprintf(stderr, "tunefleet tune: %s: %zu tasks, %u trials each\n",
                 o.onnx.c_str(), m->tasks.size(), o.trials_per_task);
  }
  absl::StatusOr<std::vector<TaskOutcome>> outcomes =
      TuneTasks(o, *server, stop, current, m->tasks);
  if (!outcomes.ok()) return ReportError("tune", outcomes.status());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const nlohmann::json j = ModelTuneJson(o, *outcomes, elapsed);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    PrintModelSummary(o, *m, outcomes->size(), elapsed, j);
  }
  if (stop.fired()) return 130;
  return kExitOk;
}

}  // namespace tunefleet::cli
