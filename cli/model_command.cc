#include "cli/model_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/model_view.h"
#include "cli/progress.h"
#include "cli/stop_signal.h"
#include "contract/json.h"
#include "contract/names.h"
#include "model_runtime/plan_format.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

using onnx_import::ModelTasks;

// The coverage report as JSON: the totals, each class's share, and its
// op types (onnx_import::Coverage).
nlohmann::json CoverageJson(const onnx_import::Coverage& c) {
  auto list = [](const std::vector<onnx_import::OpShare>& shares) {
    nlohmann::json out = nlohmann::json::array();
    for (const onnx_import::OpShare& s : shares) {
      nlohmann::json j = {{"op_type", s.op_type},
                          {"nodes", s.nodes},
                          {"flops", s.flops},
                          {"bytes", s.bytes}};
      if (!s.reason.empty()) j["reason"] = s.reason;
      if (s.unknown > 0) j["unknown_shape_nodes"] = s.unknown;
      out.push_back(j);
    }
    return out;
  };
  auto sum = [](const std::vector<onnx_import::OpShare>& shares, bool flops) {
    double total = 0;
    for (const onnx_import::OpShare& s : shares) {
      total += flops ? s.flops : s.bytes;
    }
    return total;
  };
  nlohmann::json share = nlohmann::json::object();
  const std::pair<const char*, const std::vector<onnx_import::OpShare>*>
      classes[] = {{"tuned", &c.tuned},
                   {"fused", &c.fused},
                   {"folded", &c.folded},
                   {"left", &c.left}};
  nlohmann::json j = {{"flops", c.flops},
                      {"bytes", c.bytes},
                      {"unknown_shape_nodes", c.unknown_nodes}};
  for (const auto& [name, shares] : classes) {
    share[name] = {
        {"flops", c.flops > 0 ? sum(*shares, true) / c.flops : 0.0},
        {"bytes", c.bytes > 0 ? sum(*shares, false) / c.bytes : 0.0}};
    j[name] = list(*shares);
  }
  j["share"] = share;
  return j;
}

// Percent of `part` in `total` (0 when the total is 0).
double Percent(double part, double total) {
  return total > 0 ? 100 * part / total : 0;
}

// The coverage report as text: the classes' shares of the model's FLOPs
// and bytes, then the ops left by share with their reason.
std::string CoverageText(const onnx_import::Coverage& c) {
  std::string text = absl::StrFormat(
      "coverage: %.1f MFLOP, %.1f MB read and written per inference "
      "(docs/MODEL_COVERAGE.md)\n%-8s %7s %7s %6s\n",
      c.flops / 1e6, c.bytes / 1e6, "", "FLOPs", "bytes", "nodes");
  const std::pair<const char*, const std::vector<onnx_import::OpShare>*>
      classes[] = {{"tuned", &c.tuned},
                   {"fused", &c.fused},
                   {"folded", &c.folded},
                   {"left", &c.left}};
  for (const auto& [name, shares] : classes) {
    double flops = 0, bytes = 0;
    int nodes = 0;
    for (const onnx_import::OpShare& s : *shares) {
      flops += s.flops;
      bytes += s.bytes;
      nodes += s.nodes;
    }
    absl::StrAppendFormat(&text, "  %-6s %6.2f%% %6.2f%% %6d\n", name,
                          Percent(flops, c.flops), Percent(bytes, c.bytes),
                          nodes);
  }
  if (c.unknown_nodes > 0) {
    absl::StrAppendFormat(
        &text,
        "  %d nodes have an unknown output shape: their work is not counted "
        "and the shares above overstate the coverage (give every input's "
        "shape with --input-shape)\n",
        c.unknown_nodes);
  }
  if (!c.left.empty()) {
    absl::StrAppend(&text, "not tuned (left), by share:\n");
    for (const onnx_import::OpShare& s : c.left) {
      absl::StrAppendFormat(
          &text, "    %-18s %4d  %6.2f%% FLOPs %6.2f%% bytes  (%s)\n",
          s.op_type, s.nodes, Percent(s.flops, c.flops),
          Percent(s.bytes, c.bytes), s.reason);
    }
  }
  return text;
}

nlohmann::json TasksJson(const std::string& onnx,
                         const onnx_import::ModelTasks& m) {
  nlohmann::json tasks = nlohmann::json::array();
  double total = 0;
  for (const onnx_import::ModelTask& t : m.tasks) {
    tasks.push_back({{"op", t.workload.op()},
                     {"workload_key", t.workload.Canonical()},
                     {"shape", t.workload.ShapeString()},
                     {"count", t.count},
                     {"flops", t.flops},
                     {"template_name", t.TemplateName()},
                     {"nodes", t.nodes}});
    total += t.flops * t.count;
  }
  nlohmann::json unsupported = nlohmann::json::array();
  for (const auto& u : m.unsupported) {
    unsupported.push_back(
        {{"op_type", u.op_type}, {"count", u.count}, {"reason", u.reason}});
  }
  nlohmann::json inputs = nlohmann::json::object();
  for (const auto& [name, dims] : m.input_shapes) inputs[name] = dims;
  return {{"model", onnx},
          {"nodes", m.nodes},
          {"input_shapes", inputs},
          {"tasks", tasks},
          {"total_flops", total},
          {"unsupported", unsupported},
          {"coverage", CoverageJson(m.coverage)}};
}

void PrintTasks(const std::string& onnx, const onnx_import::ModelTasks& m) {
  double total = 0;
  for (const onnx_import::ModelTask& t : m.tasks) total += t.flops * t.count;
  std::cout << absl::StrFormat(
      "%s: %d nodes, %zu distinct tasks, %.1f MFLOP in them per inference "
      "(their templates' counts)\n",
      onnx, m.nodes, m.tasks.size(), total / 1e6);
  std::cout << absl::StrFormat("%3s %-17s %5s %9s %9s  %s\n", "#", "OP",
                               "COUNT", "MFLOP", "TOTAL", "SHAPE");
  int i = 0;
  for (const onnx_import::ModelTask& t : m.tasks) {
    std::cout << absl::StrFormat(
        "%3d %-17s %5d %9.3f %9.3f  %s\n", ++i, t.workload.op(), t.count,
        t.flops / 1e6, t.flops * t.count / 1e6, t.workload.ShapeString());
  }
  std::cout << CoverageText(m.coverage);
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

void AddTasksOptions(CLI::App* cmd, TasksOptions& o) {
  AddOnnxInputOptions(cmd, o.onnx, o.input_shapes);
  cmd->add_flag("--json", o.json, "print a JSON object on stdout");
}

int RunTasks(const TasksOptions& o) {
  absl::StatusOr<onnx_import::ModelTasks> m =
      LoadModelTasks(o.onnx, o.input_shapes);
  if (!m.ok()) return ReportError("tasks", m.status());
  if (o.json) {
    std::cout << JsonText(TasksJson(o.onnx, *m)) << "\n";
  } else {
    PrintTasks(o.onnx, *m);
  }
  return kExitOk;
}

std::string TaskLine(int index, size_t total, size_t workload_width,
                     const onnx_import::ModelTask& task,
                     const tunefleet::v1::ModelTaskProgress& t) {
  const tunefleet::v1::JobProgress& p = t.job();
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
    absl::StrAppend(&line, contract::JobStateName(p.state()), " ", p.message());
  }
  absl::StrAppendFormat(&line, "  (%u/%u trials)", p.trials_done(),
                        t.trials_granted());
  return line;
}

std::string SkippedTasksText(
    const tunefleet::v1::SubmitModelJobRequest& request,
    const google::protobuf::RepeatedPtrField<tunefleet::v1::SkippedTask>&
        skipped) {
  if (skipped.empty()) return "";
  // By template, in order of first appearance: count and first reason.
  std::vector<std::string> order;
  std::map<std::string, std::pair<int, std::string>> groups;
  for (const tunefleet::v1::SkippedTask& s : skipped) {
    std::string name = "?";
    if (s.task_index() < static_cast<uint32_t>(request.tasks_size())) {
      const tunefleet::v1::ModelTask& t = request.tasks(s.task_index());
      name = t.template_name().empty()
                 ? absl::StrCat(t.workload().op(), "'s default template")
                 : t.template_name();
    }
    auto [it, added] = groups.try_emplace(name, 0, s.reason());
    if (added) order.push_back(name);
    ++it->second.first;
  }
  std::string text =
      absl::StrFormat("skipped %d of %d tasks, not tuned on this device:\n",
                      skipped.size(), request.tasks_size());
  for (const std::string& name : order) {
    const auto& [count, reason] = groups[name];
    absl::StrAppend(&text, "  ", name, " x", count, ": ", reason, "\n");
  }
  return text;
}

namespace {

using tunefleet::v1::JobProgress;
using tunefleet::v1::ModelTaskProgress;

// The model job's task progress and skipped tasks by task index.
struct TaskIndex {
  explicit TaskIndex(const JobProgress& last) {
    for (const ModelTaskProgress& t : last.model().task_progress()) {
      progress[t.task_index()] = &t;
    }
    for (const tunefleet::v1::SkippedTask& s : last.model().skipped()) {
      skipped[s.task_index()] = s.reason();
    }
  }
  std::map<uint32_t, const ModelTaskProgress*> progress;
  std::map<uint32_t, std::string> skipped;
};

// The request's tasks of imported task `workload`: its generated
// template's first, then its library templates'.
std::vector<uint32_t> TasksOf(const ModelJobPlan& plan, size_t workload) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < plan.workload_of_task.size(); ++i) {
    if (plan.workload_of_task[i] == workload) {
      out.push_back(static_cast<uint32_t>(i));
    }
  }
  return out;
}

}  // namespace

std::vector<UntriedTask> UntriedTasks(const onnx_import::ModelTasks& m,
                                      const ModelJobPlan& plan,
                                      const JobProgress& last) {
  std::vector<UntriedTask> out;
  for (const ModelTaskProgress& t : last.model().task_progress()) {
    if (t.job().trials_done() > 0 ||
        t.task_index() >= plan.workload_of_task.size()) {
      continue;
    }
    out.push_back(
        {t.task_index(),
         m.tasks[plan.workload_of_task[t.task_index()]].workload.Canonical(),
         plan.request.tasks(static_cast<int>(t.task_index())).template_name(),
         t.trials_granted()});
  }
  return out;
}

std::string UntriedTasksText(const std::vector<UntriedTask>& untried,
                             size_t tasks) {
  if (untried.empty()) return "";
  std::string text = absl::StrFormat(
      "%zu of %zu tasks got no trial (the budget ran out before them; more "
      "--trials or --trials-per-task reaches them):\n",
      untried.size(), tasks);
  for (const UntriedTask& t : untried) {
    absl::StrAppend(&text, "  task ", t.task_index, " ", t.workload_key,
                    t.template_name.empty() ? "" : " [", t.template_name,
                    t.template_name.empty() ? "" : "]", "\n");
  }
  return text;
}

std::string BudgetWarning(uint32_t trials, size_t tuned_tasks,
                          size_t workloads) {
  if (trials >= tuned_tasks) return "";
  // --trials-per-task counts per workload; a workload has a task per
  // template that runs it.
  const size_t per_workload =
      workloads == 0 ? tuned_tasks : (tuned_tasks + workloads - 1) / workloads;
  return absl::StrFormat(
      "warning: a budget of %u trials for %zu tasks leaves at least %zu "
      "tasks without a trial; --trials %zu (or --trials-per-task %zu: %zu "
      "workloads) gives each task one\n",
      trials, tuned_tasks, tuned_tasks - trials, tuned_tasks, per_workload,
      workloads);
}

nlohmann::json ModelTuneJson(
    const TuneOptions& o, const onnx_import::ModelTasks& m,
    const ModelJobPlan& plan,
    const tunefleet::v1::SubmitModelJobResponse& submitted,
    const JobProgress& last, double elapsed_s) {
  const TaskIndex index(last);
  // Per imported workload: its tasks (the generated template's first, then
  // the library templates'), each as its task's progress says.
  nlohmann::json workloads = nlohmann::json::array();
  for (size_t w = 0; w < m.tasks.size(); ++w) {
    const onnx_import::ModelTask& task = m.tasks[w];
    nlohmann::json tasks = nlohmann::json::array();
    // What an emitted library runs for the workload: the fastest of its
    // tasks' best kernels and the naive kernel (emitter/emitter.h).
    std::string deployed;
    double deployed_ns = 0;
    auto consider = [&](const std::string& what, double ns) {
      if (ns > 0 && (deployed_ns == 0 || ns < deployed_ns)) {
        deployed = what;
        deployed_ns = ns;
      }
    };
    double reference_ns = 0;
    for (const uint32_t id : TasksOf(plan, w)) {
      const std::string& name = plan.request.tasks(id).template_name();
      nlohmann::json t = {{"task_index", id}, {"template_name", name}};
      auto found = index.progress.find(id);
      if (found == index.progress.end()) {
        const auto skipped = index.skipped.find(id);
        t["skipped"] =
            skipped == index.skipped.end() ? "not tuned" : skipped->second;
        tasks.push_back(t);
        continue;
      }
      const ModelTaskProgress& tp = *found->second;
      const JobProgress& p = tp.job();
      t["template_name"] = p.template_name();
      t["job_id"] = p.job_id();
      t["state"] = tunefleet::v1::JobState_Name(p.state());
      t["trials_done"] = p.trials_done();
      t["trials_granted"] = tp.trials_granted();
      t["stopped_reason"] = tp.stopped_reason();
      t["best"] = p.has_best() ? contract::ContractJson(p.best())
                               : nlohmann::json(nullptr);
      if (p.has_best()) consider(p.template_name(), p.best().time_ns());
      if (p.reference_time_ns() > 0) reference_ns = p.reference_time_ns();
      tasks.push_back(t);
    }
    consider("reference", reference_ns);
    nlohmann::json entry = {{"workload_key", task.workload.Canonical()},
                            {"count", task.count},
                            {"flops", task.flops},
                            {"reference_time_ns", reference_ns},
                            {"tasks", tasks}};
    entry["deployed"] =
        deployed.empty() ? nlohmann::json(nullptr) : nlohmann::json(deployed);
    if (reference_ns > 0 && deployed_ns > 0) {
      entry["speedup_vs_reference"] = reference_ns / deployed_ns;
    }
    workloads.push_back(entry);
  }
  nlohmann::json untried = nlohmann::json::array();
  for (const UntriedTask& t : UntriedTasks(m, plan, last)) {
    untried.push_back({{"task_index", t.task_index},
                       {"workload_key", t.workload_key},
                       {"template_name", t.template_name},
                       {"trials_granted", t.trials_granted}});
  }
  // The model job as every JSON shows a job (contract/json.h), then what only
  // this run knows.
  nlohmann::json j = contract::ContractJson(last);
  j["job_id"] = submitted.job_id();
  j["device_key"] = submitted.device_key();
  j["model_file"] = o.onnx;
  j["library_candidates"] = !o.no_library;
  j["workloads"] = workloads;
  j["tasks_without_trials"] = untried;
  j["elapsed_s"] = elapsed_s;
  j["coverage"] = CoverageJson(m.coverage);
  // The measured run's layers with the figures the table shows.
  nlohmann::json layers = nlohmann::json::array();
  for (const ModelLayerRow& r : ModelLayerRows(last)) {
    layers.push_back(
        {{"label", r.layer->label()},
         {"workload_key", r.layer->workload()},
         {"entry", r.layer->entry()},
         {"measured_ns", r.layer->measured_ns()},
         {"estimate_ns", r.layer->estimate_ns()},
         {"share", r.share},
         {"trials", r.trials >= 0 ? nlohmann::json(r.trials) : nullptr},
         {"speedup_vs_naive",
          r.speedup > 0 ? nlohmann::json(r.speedup) : nullptr}});
  }
  j["layers"] = layers;
  if (o.trials_per_task > 0) j["trials_per_task"] = o.trials_per_task;
  if (o.server.empty()) j["database"] = o.embedded.db_path;
  return j;
}

namespace {

// Submits the model job. Errors: the server's refusal (FromGrpc).
absl::StatusOr<tunefleet::v1::SubmitModelJobResponse> SubmitModel(
    const client::ServerConnection& server,
    const tunefleet::v1::SubmitModelJobRequest& request) {
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(server));
  grpc::ClientContext context;
  // The server checks and stores every task (and reads their templates'
  // earlier records) before it answers.
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(300));
  tunefleet::v1::SubmitModelJobResponse response;
  TUNEFLEET_RETURN_IF_ERROR(
      FromGrpc(stub->SubmitModelJob(&context, request, &response), server));
  return response;
}

// The per-workload lines of the results: each imported task's line
// (TaskLine) and its library templates' results beneath it.
std::string TaskLines(const onnx_import::ModelTasks& m,
                      const ModelJobPlan& plan, const JobProgress& last) {
  size_t workload_width = 0;
  for (const onnx_import::ModelTask& task : m.tasks) {
    workload_width = std::max(workload_width, task.workload.Canonical().size());
  }
  const TaskIndex index(last);
  std::string out;
  for (size_t w = 0; w < m.tasks.size(); ++w) {
    const std::vector<uint32_t> ids = TasksOf(plan, w);
    for (size_t k = 0; k < ids.size(); ++k) {
      const std::string& name = plan.request.tasks(ids[k]).template_name();
      auto found = index.progress.find(ids[k]);
      if (found == index.progress.end()) {
        if (k > 0) continue;  // a skipped library template: said at the start
        const auto skipped = index.skipped.find(ids[k]);
        absl::StrAppendFormat(
            &out, "[%2d/%zu] %-*s x%-2d skipped: %s\n", static_cast<int>(w + 1),
            m.tasks.size(), static_cast<int>(workload_width),
            m.tasks[w].workload.Canonical(), m.tasks[w].count,
            skipped == index.skipped.end() ? "not tuned" : skipped->second);
        continue;
      }
      const ModelTaskProgress& t = *found->second;
      if (k == 0) {
        absl::StrAppend(&out,
                        TaskLine(static_cast<int>(w + 1), m.tasks.size(),
                                 workload_width, m.tasks[w], t),
                        "\n");
        continue;
      }
      absl::StrAppendFormat(
          &out, "        %s: %s (%u/%u trials)\n", name,
          t.job().has_best()
              ? absl::StrFormat("%.4f ms", t.job().best().time_ns() / 1e6)
              : std::string("no result"),
          t.job().trials_done(), t.trials_granted());
    }
  }
  return out;
}

// The run's summary: the model job, its trials, the model's estimated
// latency before and after, what was not tuned, where the records are.
// `cancelled`: the count of a job cancelled here (CancelledText), else "".
void PrintModelSummary(const TuneOptions& o, const onnx_import::ModelTasks& m,
                       const ModelJobPlan& plan, const JobProgress& last,
                       double elapsed, const std::string& cancelled) {
  const tunefleet::v1::ModelProgress& model = last.model();
  std::cout << absl::StrFormat(
      "%s: model job %lld %s on %s, %zu workloads in %d tasks", o.onnx,
      static_cast<long long>(last.job_id()),
      contract::JobStateName(last.state()), last.device_key(), m.tasks.size(),
      plan.request.tasks_size());
  if (model.skipped_size() > 0) {
    std::cout << " (" << model.skipped_size() << " skipped)";
  }
  std::cout << absl::StrFormat(
      ", %u of %u trials (%s, %s) in %.0f s\n", last.trials_done(),
      last.trials_total(), o.strategy,
      contract::TaskSchedulerName(model.task_scheduler()), elapsed);
  if (!cancelled.empty()) std::cout << "  " << cancelled << "\n";
  if (!last.message().empty()) std::cout << "  " << last.message() << "\n";
  std::string untried =
      UntriedTasksText(UntriedTasks(m, plan, last),
                       static_cast<size_t>(model.task_progress_size()));
  absl::StrReplaceAll({{"\n", "\n  "}}, &untried);
  if (!untried.empty()) {
    std::cout << "  " << untried.substr(0, untried.size() - 2);
  }
  std::cout << "  " << ModelLatencyText(model) << "\n"
            << "  (per workload the fastest of the tuned kernel, "
            << (o.no_library ? "no library call (--no-library)"
                             : "the library calls tried")
            << " and the naive kernel, as emitted libraries run them)\n";
  if (const std::string measured = MeasuredLatencyText(model);
      !measured.empty()) {
    std::cout << "  " << measured << "\n";
  }
  if (std::string layers = ModelLayerTable(last); !layers.empty()) {
    absl::StrReplaceAll({{"\n", "\n  "}}, &layers);
    std::cout << "  " << layers.substr(0, layers.size() - 2);
  }
  if (!m.unsupported.empty()) {
    std::vector<std::string> ops;
    for (const auto& u : m.unsupported) {
      ops.push_back(absl::StrCat(u.op_type, " x", u.count));
    }
    std::cout << "  not tuned: " << absl::StrJoin(ops, ", ") << "\n";
  }
  std::string coverage = CoverageText(m.coverage);
  absl::StrReplaceAll({{"\n", "\n  "}}, &coverage);
  std::cout << "  " << coverage.substr(0, coverage.size() - 2);
  if (o.server.empty())
    std::cout << "  records in " << o.embedded.db_path << "\n";
}

}  // namespace

int RunModelTune(const TuneOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<onnx_import::ModelTasks> m =
      LoadModelTasks(o.onnx, o.input_shapes);
  if (!m.ok()) return ReportError("tune", m.status());
  absl::StatusOr<ModelJobPlan> plan = BuildModelJobRequest(o, *m);
  if (!plan.ok()) return ReportError("tune", plan.status());
  if (!o.no_measure) {
    // The server runs the tuned plan end to end once the budget is spent.
    std::string bytes, error;
    if (tunefleet_tuned::ReadWholeFile(o.onnx, &bytes, &error) != 0) {
      return ReportError("tune", absl::NotFoundError(error));
    }
    plan->request.set_onnx_model(std::move(bytes));
    for (const std::string& s : o.input_shapes) {
      plan->request.add_input_shapes(s);
    }
  }
  TuneRun run;
  absl::StatusOr<client::ServerConnection> server = StartTune(o, &run);
  if (!server.ok()) return ReportError("tune", server.status());
  const tunefleet::v1::SubmitModelJobRequest& request = plan->request;
  if (!o.quiet) {
    std::fprintf(stderr,
                 "tunefleet tune: %s: %zu workloads, %d tasks, %u trials "
                 "(%s, %s task scheduler)\n",
                 o.onnx.c_str(), m->tasks.size(), request.tasks_size(),
                 request.trials(), o.strategy.c_str(),
                 contract::TaskSchedulerName(request.task_scheduler()).c_str());
  }
  absl::StatusOr<tunefleet::v1::SubmitModelJobResponse> submitted =
      SubmitModel(*server, request);
  if (!submitted.ok()) return ReportError("tune", submitted.status());
  run.Submitted(submitted->job_id());
  if (!o.quiet) {
    std::fprintf(stderr, "tunefleet tune: model job %lld on %s\n%s",
                 static_cast<long long>(submitted->job_id()),
                 submitted->device_key().c_str(),
                 SkippedTasksText(request, submitted->skipped()).c_str());
  }
  // A budget that cannot reach every task is said before the run, not
  // found in its summary.
  std::fprintf(stderr, "%s",
               BudgetWarning(request.trials(),
                             static_cast<size_t>(request.tasks_size() -
                                                 submitted->skipped_size()),
                             m->tasks.size())
                   .c_str());
  ModelProgressPrinter printer(o.quiet, /*task_lines=*/false);
  absl::StatusOr<JobProgress> last =
      WatchJob(*server, submitted->job_id(),
               [&](const JobProgress& p) { printer.Update(p); });
  printer.End();
  if (!last.ok()) return ReportError("tune", last.status());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // After a Ctrl-C: one count, from the cancel's answer.
  std::string cancelled;
  if (last->state() == tunefleet::v1::JOB_STATE_CANCELLED) {
    cancelled = CancelledText(run.CancelledProgress(*last));
  }
  const std::string lines = TaskLines(*m, *plan, *last);
  if (o.json) {
    if (!o.quiet) std::fprintf(stderr, "%s", lines.c_str());
    std::cout << JsonText(
                     ModelTuneJson(o, *m, *plan, *submitted, *last, elapsed))
              << "\n";
  } else {
    std::cout << lines;
    PrintModelSummary(o, *m, *plan, *last, elapsed, cancelled);
  }
  return run.ExitCode(*last);
}

}  // namespace tunefleet::cli
