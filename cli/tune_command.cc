#include "cli/tune_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/embedded.h"
#include "cli/model_command.h"
#include "cli/model_request.h"
#include "cli/progress.h"
#include "cli/stop_signal.h"
#include "contract/json.h"
#include "contract/names.h"
#include "contract/timing_policy.h"
#include "kernels_templates/workload.h"
#include "logging/log_flag.h"
#include "search/strategy.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

using tunefleet::v1::JobProgress;

// The job as every JSON shows a job (contract::ContractJson), with what only
// this run knows: the elapsed time, for a local run the database, and once
// the naive reference is measured its GFLOP/s and the speedup over it. A
// job that ran out of configs ends done with no message: it says so.
nlohmann::json SummaryJson(const TuneOptions& o,
                           const tunefleet::v1::SubmitJobResponse& submitted,
                           const JobProgress& p, double elapsed_s) {
  nlohmann::json j = contract::ContractJson(p);
  j["job_id"] = submitted.job_id();
  j["device_key"] = submitted.device_key();
  j["space_size"] = submitted.space_size();
  j["elapsed_s"] = elapsed_s;
  if (o.server.empty()) j["database"] = o.embedded.db_path;
  if (p.message().empty()) j["message"] = SpaceExhaustedText(p);
  if (p.reference_time_ns() > 0 && p.has_best()) {
    j["reference_gflops"] =
        p.best().gflops() * p.best().time_ns() / p.reference_time_ns();
    j["speedup_vs_reference"] = p.reference_time_ns() / p.best().time_ns();
  }
  // A kernel of 0 FLOPs (copy, fill): its bandwidth (GB/s, bytes per ns).
  const TaskCounts counts = CountsOf(p);
  if (counts.bytes > 0) {
    if (p.has_best() && p.best().time_ns() > 0) {
      j["best_gbps"] = counts.bytes / p.best().time_ns();
    }
    if (p.reference_time_ns() > 0) {
      j["reference_gbps"] = counts.bytes / p.reference_time_ns();
    }
  }
  return j;
}

// `cancelled`: the count of a job cancelled here (CancelledText), else "".
void PrintSummary(const TuneOptions& o,
                  const tunefleet::v1::SubmitJobResponse& submitted,
                  const JobProgress& p, const std::string& cancelled) {
  std::cout << "job " << submitted.job_id() << " "
            << contract::JobStateName(p.state()) << ": " << p.workload_key()
            << " on " << submitted.device_key();
  if (cancelled.empty()) std::cout << ", " << p.trials_done() << " trials";
  std::cout << " (" << contract::StrategyName(p.strategy())
            << "), search space " << submitted.space_size() << " configs\n";
  // One count for a cancelled job, with the trials still in flight.
  if (!cancelled.empty()) std::cout << "  " << cancelled << "\n";
  const std::string message =
      p.message().empty() ? SpaceExhaustedText(p) : p.message();
  if (!message.empty()) std::cout << "  " << message << "\n";
  if (p.history_rows() > 0) {
    std::cout << "  the model started from " << p.history_rows()
              << " earlier records (transfer learning)\n";
  }
  std::vector<std::string> errors;
  for (const auto& [code, count] :
       std::map<std::string, uint32_t>(p.errors().begin(), p.errors().end())) {
    errors.push_back(absl::StrCat(code, " ", count));
  }
  std::cout << "  results: " << absl::StrJoin(errors, ", ") << "\n";
  if (!p.has_best()) {
    std::cout << "  no config ran correctly\n";
    return;
  }
  const tunefleet::v1::TuningRecord& b = p.best();
  // A kernel of 0 FLOPs (copy, fill): its bandwidth in place of GFLOP/s.
  const TaskCounts counts = CountsOf(p);
  const bool bandwidth = counts.bandwidth_only();
  const char* unit = bandwidth ? "GB/s" : "GFLOP/s";
  auto speed = [&](double time_ns) {
    if (time_ns <= 0) return 0.0;
    return bandwidth ? counts.bytes / time_ns
                     : b.gflops() * b.time_ns() / time_ns;
  };
  std::cout << absl::StrFormat("  best: %s\n  kernel time %.4f ms, %.2f %s\n",
                               ConfigText(b.config()), b.time_ns() / 1e6,
                               speed(b.time_ns()), unit);
  if (p.reference_time_ns() > 0) {
    std::cout << absl::StrFormat(
        "  naive reference %.4f ms, %.2f %s: %s\n", p.reference_time_ns() / 1e6,
        speed(p.reference_time_ns()), unit,
        SpeedupText(p.reference_time_ns(), b.time_ns()));
  }
  if (o.server.empty())
    std::cout << "  records in " << o.embedded.db_path << "\n";
}

}  // namespace

void AddTuneOptions(CLI::App* cmd, TuneOptions& o) {
  cmd->add_option(
      "--op", o.op,
      absl::StrCat("op to tune: ", absl::StrJoin(templates::KnownOps(), ", "),
                   " (default: gemm, or a spec template's)"));
  cmd->add_option("--shape", o.shape,
                  "shape, e.g. M=512,N=512,K=512 (attributes too: act=relu)");
  cmd->add_option("--dtype", o.dtype, "fp32 or fp16")->capture_default_str();
  cmd->add_option("--onnx", o.onnx,
                  "tune every task of this ONNX model instead of one shape");
  cmd->add_option("--input-shape", o.input_shapes,
                  "with --onnx: dims of an input, NAME=D1,D2,... (repeat)");
  cmd->add_option("--trials-per-task", o.trials_per_task,
                  absl::StrCat("with --onnx: the model's trial budget is this "
                               "x its distinct workloads (default ",
                               kDefaultTrialsPerWorkload,
                               "; or give --trials, the whole model's)"))
      ->check(CLI::Range(1u, kMaxModelTrials));
  cmd->add_option("--task-scheduler", o.task_scheduler,
                  "with --onnx: how the budget is spread over the tasks: "
                  "gradient (Ansor's rule: trials go where the model's "
                  "estimated latency falls fastest) or round-robin (the "
                  "same trials for every task)")
      ->capture_default_str();
  cmd->add_option("--batch-trials", o.batch_trials,
                  "with --onnx: trials granted to a task at a time (default: "
                  "chosen from the budget and the number of tasks)")
      ->check(CLI::Range(1u, kMaxModelTrials));
  cmd->add_flag("--no-library", o.no_library,
                "with --onnx: tune only generated kernels, not the calls into "
                "vendor libraries (CLBlast) that are otherwise tasks of the "
                "model beside them, where the agents have them");
  cmd->add_flag("--no-measure", o.no_measure,
                "with --onnx: do not run the tuned model end to end once the "
                "budget is spent (by default an agent of the key runs it and "
                "the job stores its measured latency and per-layer times)");
  cmd->add_option("--template", o.template_name,
                  "template name, or a template spec file (.toml/.json) "
                  "(default: the first template that runs the workload)");
  cmd->add_option(
         "--trials", o.trials,
         absl::StrCat("trial budget (default ", o.trials,
                      "; with --onnx: the whole model's, default ",
                      kDefaultTrialsPerWorkload, " x its distinct workloads)"))
      ->each([&o](const std::string&) { o.trials_given = true; });
  cmd->add_option("--strategy", o.strategy,
                  absl::StrCat("search strategy: ",
                               absl::StrJoin(contract::StrategyNames(), ", ")))
      ->capture_default_str();
  AddServerFlags(cmd, o.server, o.connection,
                 "tunefleet-server HOST:PORT (default: embedded server)");
  cmd->add_option("--device-key", o.device_key,
                  "device key to tune for (default: the only connected one)");
  AddDbOption(cmd, o.embedded.db_path, "database of the embedded server");
  cmd->add_option("--seed", o.seed, "random seed")->capture_default_str();
  cmd->add_option("--priority", o.priority, "job priority (higher first)");
  cmd->add_option("--deadline-s", o.deadline_s,
                  "end the job after this many seconds, whatever is left of "
                  "its budget (0: none)");
  const tunefleet::v1::TimingPolicy timing = contract::DefaultTimingPolicy();
  cmd->add_option("--timeout-ms", o.timeout_ms,
                  absl::StrCat("per-trial deadline on the agent (compile + "
                               "run); a kernel past it is killed and "
                               "recorded as TIMEOUT (0: the server's "
                               "default, ",
                               timing.timeout_ms(), ")"));
  cmd->add_option("--platform", o.embedded.platform,
                  "embedded agent: OpenCL platform index");
  cmd->add_option("--device", o.embedded.device,
                  "embedded agent: OpenCL device index");
  cmd->add_option(
      "--repeat", o.repeat,
      absl::StrCat("timing: rounds per trial (default ", timing.repeat(), ")"));
  cmd->add_option("--number", o.number,
                  absl::StrCat("timing: launches per round, at least "
                               "(default ",
                               timing.number(), ")"));
  cmd->add_option("--min-repeat-ms", o.min_repeat_ms,
                  absl::StrCat("timing: raise --number until a round lasts "
                               "this long (default ",
                               timing.min_repeat_ms(), ")"));
  cmd->add_option("--early-stop", o.early_stop,
                  "stop after this many trials without improvement (0: off)");
  cmd->add_flag("--no-transfer", o.no_transfer,
                "xgb: do not start the model from earlier records");
  cmd->add_flag("--skip-reference", o.skip_reference,
                "do not time the naive reference kernel");
  cmd->add_flag("--json", o.json,
                "print one JSON object on stdout (progress stays on stderr)");
  cmd->add_flag("--quiet", o.quiet, "no progress on stderr");
  cmd->add_flag("--verbose", o.embedded.verbose, "log server and agent events");
  logging::AddLogLevelFlag(*cmd, &o.embedded.log_level)
      ->description(
          "embedded server and agent: the least severe log lines they "
          "write, trace, debug, info, warn or error (docs/FLEET.md, "
          "\"Logs\"); --verbose shows the agent's lines and the server's "
          "events on stderr");
}

tunefleet::v1::SubmitJobRequest JobRequest(const TuneOptions& o,
                                           const templates::Workload& workload,
                                           uint32_t trials) {
  tunefleet::v1::SubmitJobRequest request;
  *request.mutable_workload() = trial::WorkloadToProto(workload);
  request.set_template_name(o.template_name);
  request.set_device_key(o.device_key);
  request.set_strategy(contract::ParseStrategy(o.strategy)
                           .value_or(tunefleet::v1::STRATEGY_XGB));
  request.set_trials(trials);
  request.set_seed(o.seed);
  request.set_priority(o.priority);
  request.set_deadline_s(o.deadline_s);
  request.set_skip_reference(o.skip_reference);
  request.set_early_stop(o.early_stop);
  request.set_no_transfer(o.no_transfer);
  if (o.repeat >= 0 || o.number >= 0 || o.min_repeat_ms >= 0 ||
      o.timeout_ms > 0) {
    tunefleet::v1::TimingPolicy* t = request.mutable_timing();
    if (o.repeat >= 0) t->set_repeat(o.repeat);
    if (o.number >= 0) t->set_number(o.number);
    if (o.timeout_ms > 0) t->set_timeout_ms(o.timeout_ms);
    t->set_min_repeat_ms(o.min_repeat_ms >= 0
                             ? o.min_repeat_ms
                             : contract::DefaultTimingPolicy().min_repeat_ms());
  }
  return request;
}

namespace {

absl::StatusOr<client::ServerConnection> ServerFor(
    const TuneOptions& o, std::unique_ptr<EmbeddedFleet>* fleet) {
  if (!o.server.empty()) return client::ConnectionTo(o.server, o.connection);
  EmbeddedOptions e = o.embedded;
  e.device_key = o.device_key;
  absl::StatusOr<std::unique_ptr<EmbeddedFleet>> started =
      EmbeddedFleet::Start(e);
  if (!started.ok()) return started.status();
  *fleet = *std::move(started);
  return (*fleet)->connection();
}

// Cancels `current`'s job on the embedded fleet's server, keeping the
// answer (the count and the trials in flight) for the summary; before a job
// is submitted, every job of the fleet.
void CancelEmbedded(EmbeddedFleet& fleet, CurrentJob& current) {
  const int64_t job_id = current.id();
  if (job_id == 0) {
    std::fprintf(stderr,
                 "\ntunefleet tune: cancelling; press Ctrl-C again "
                 "to quit at once\n");
    fleet.server().jobs().CancelAll();
    return;
  }
  std::fprintf(stderr,
               "\ntunefleet tune: cancelling job %lld (its finished trials "
               "stay in the database); press Ctrl-C again to quit at once\n",
               static_cast<long long>(job_id));
  auto stub =
      tunefleet::v1::TuningService::NewStub(client::Dial(fleet.connection()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  tunefleet::v1::CancelJobRequest request;
  request.set_job_id(job_id);
  JobProgress progress;
  if (stub->CancelJob(&context, request, &progress).ok()) {
    current.SetCancelled(progress);
  } else {
    fleet.server().jobs().CancelAll();  // e.g. it ended just now
  }
}

void StopOnSignal(StopSignal& stop, EmbeddedFleet* fleet,
                  const std::string& address, CurrentJob* current) {
  if (fleet != nullptr) {
    // Ctrl-C cancels an embedded job cleanly: its finished trials stay,
    // the rest are recorded as CANCELLED.
    stop.Set([fleet, current] { CancelEmbedded(*fleet, *current); });
    return;
  }
  stop.Set([address, current] {
    const int64_t job_id = current->id();
    if (job_id == 0) {
      std::fprintf(stderr,
                   "\ntunefleet tune: interrupted; a job submitted just now "
                   "goes on on the server: `tunefleet jobs --server %s` "
                   "lists it\n",
                   address.c_str());
    } else {
      std::fprintf(stderr,
                   "\ntunefleet tune: interrupted; job %lld goes on on the "
                   "server: `tunefleet watch %lld --server %s` follows it, "
                   "`tunefleet cancel %lld --server %s` cancels it\n",
                   static_cast<long long>(job_id),
                   static_cast<long long>(job_id), address.c_str(),
                   static_cast<long long>(job_id), address.c_str());
    }
    std::_Exit(130);
  });
}

}  // namespace

void CurrentJob::SetCancelled(const JobProgress& p) {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = p;
}

std::optional<JobProgress> CurrentJob::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

void TuneRun::Submitted(int64_t job_id) {
  current.Set(job_id);
  if (stop.fired() && fleet) fleet->server().jobs().CancelAll();
}

JobProgress TuneRun::CancelledProgress(const JobProgress& last) const {
  return current.cancelled().value_or(last);
}

int TuneRun::ExitCode(const JobProgress& last) const {
  if (stop.fired()) return 130;
  return last.state() == tunefleet::v1::JOB_STATE_DONE ? kExitOk : kExitFailed;
}

absl::StatusOr<client::ServerConnection> StartTune(const TuneOptions& o,
                                                   TuneRun* run) {
  TUNEFLEET_RETURN_IF_ERROR(contract::ParseStrategy(o.strategy).status());
  TUNEFLEET_ASSIGN_OR_RETURN(client::ServerConnection server,
                             ServerFor(o, &run->fleet));
  StopOnSignal(run->stop, run->fleet.get(), server.address, &run->current);
  return server;
}

int RunTune(const TuneOptions& o) {
  if (!o.onnx.empty()) return RunModelTune(o);
  const auto start = std::chrono::steady_clock::now();
  if (o.shape.empty()) {
    return ReportError("tune", absl::InvalidArgumentError(
                                   "give --shape (one workload) or --onnx "
                                   "(a model)"));
  }
  absl::StatusOr<std::optional<tunefleet::v1::TemplateSpec>> spec =
      LoadTemplateSpec(o.template_name);
  if (!spec.ok()) return ReportError("tune", spec.status());
  absl::StatusOr<templates::Workload> workload =
      templates::Workload::Parse(ResolveOp(o.op, *spec), o.shape, o.dtype);
  if (!workload.ok()) return ReportError("tune", workload.status());
  TuneRun run;
  absl::StatusOr<client::ServerConnection> server = StartTune(o, &run);
  if (!server.ok()) return ReportError("tune", server.status());
  tunefleet::v1::SubmitJobRequest request = JobRequest(o, *workload, o.trials);
  if (*spec) {
    // The spec names its template; the file path is not a template name.
    *request.mutable_template_spec() = **spec;
    request.clear_template_name();
  }
  ProgressPrinter printer(o.quiet);
  absl::StatusOr<JobOutcome> outcome = RunJob(
      *server, request,
      [&](const tunefleet::v1::SubmitJobResponse& submitted) {
        run.Submitted(submitted.job_id());
        if (o.quiet) return;
        std::fprintf(stderr,
                     "tunefleet tune: job %lld, %s on %s, %u trials (%s), "
                     "%llu configs in the search space\n",
                     static_cast<long long>(submitted.job_id()),
                     workload->Canonical().c_str(),
                     submitted.device_key().c_str(), o.trials,
                     o.strategy.c_str(),
                     static_cast<unsigned long long>(submitted.space_size()));
      },
      [&](const JobProgress& p) { printer.Update(p); });
  printer.End();
  if (!outcome.ok()) return ReportError("tune", outcome.status());
  const JobProgress& last = outcome->last;

  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // After a Ctrl-C: one count, from the cancel's answer (trials still in
  // flight then may land later).
  std::string cancelled;
  if (last.state() == tunefleet::v1::JOB_STATE_CANCELLED) {
    cancelled = CancelledText(run.CancelledProgress(last));
  }
  if (o.json) {
    std::cout << JsonText(SummaryJson(o, outcome->submitted, last, elapsed))
              << "\n";
  } else {
    PrintSummary(o, outcome->submitted, last, cancelled);
  }
  return run.ExitCode(last);
}

}  // namespace tunefleet::cli
