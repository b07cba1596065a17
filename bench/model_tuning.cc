// bench/model_tuning: does the task scheduler spend a model's trials where
// its latency is? One ONNX model (default: the PP-OCR cls model that
// deploy/fetch-model.sh downloads), its tasks on their ops' generated
// templates, one total budget (--trials-per-task x tasks), tuned twice as a
// model job (SubmitModelJob, docs/MODEL_JOBS.md) on this machine's OpenCL
// device:
//   run A: TASK_SCHEDULER_ROUND_ROBIN, the uniform allocation;
//   run B: TASK_SCHEDULER_GRADIENT, Ansor's rule;
// each through a real tunefleet-server process (a fresh SQLite file, so B
// learns nothing from A; no_transfer too) and one real tunefleet-agent
// process, both from the build tree, on loopback. It prints the model's
// estimated latency (ModelProgress.latency_history) every 10% of the budget
// for both, and after how many trials the scheduler reaches the uniform
// allocation's final latency.
//
// The scaling row runs the same model job (gradient) with 1 and 2 agents
// that use FakeBackend -- a fake measurement backend that sleeps
// --fake-delay-ms per measurement and answers without OpenCL -- and prints
// the wall times and the speedup: whether the model job keeps every agent
// of its key busy across its tasks.
//
// Usage: model_tuning [--onnx FILE --input-shape x=1,3,48,192]
//                     [--trials-per-task 8] [--seed 1] [--strategy xgb]
//                     [--batch-trials 0]
//                     [--platform 0 --device 0] [--fake-delay-ms 20]
//                     [--only all|real|fake] [--json]
// Prints figures; it never passes or fails on a time.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/subprocess.h"
#include "contract/names.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "onnx_import/onnx_import.h"
#include "tests/support/free_port.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Stub = tunefleet::v1::TuningService::Stub;
using tunefleet::v1::JobProgress;
using tunefleet::v1::LatencyPoint;
using tunefleet::v1::SubmitModelJobRequest;

constexpr char kDefaultModel[] = TUNEFLEET_SOURCE_DIR
    "/.cache/models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
constexpr char kDefaultInputShape[] = "x=1,3,48,192";
constexpr char kFakeKey[] = "fake-model-tuning";

struct Flags {
  std::string onnx;
  std::vector<std::string> input_shapes;
  uint32_t trials_per_task = 8;
  uint64_t seed = 1;
  std::string strategy = "xgb";
  uint32_t batch_trials = 0;
  int platform = 0;
  int device = 0;
  int fake_delay_ms = 20;
  std::string only = "all";
  bool json = false;
};

// Progress lines go to stderr, so that --json leaves stdout to the object.
void Note(const std::string& line) {
  std::fprintf(stderr, "model_tuning: %s\n", line.c_str());
}

// The binary `name` beside this executable (a packed copy, as
// deploy/gpu-pack.sh lays them out) if there is one, else `built` (the
// build tree's).
std::string SiblingOr(const char* name, const char* built) {
  std::error_code ec;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path sibling = self.parent_path() / name;
    if (std::filesystem::exists(sibling, ec)) return sibling.string();
  }
  return built;
}

// SIGTERM, then SIGKILL if it has not ended within `grace_ms`.
void Stop(base::Subprocess& process, double grace_ms = 10000) {
  if (!process.running()) return;
  (void)process.Signal(SIGTERM);
  if (!process.Wait(base::DeadlineIn(grace_ms)).ok()) process.Kill();
}

// A tunefleet-server process from the build tree on a loopback port, with a
// fresh SQLite file, accepting callers without a token (loopback
// development mode, as bench/fleet_load runs it).
struct LocalServer {
  std::filesystem::path dir;
  std::string address;
  base::Subprocess process;
  std::unique_ptr<Stub> stub;

  ~LocalServer() { Stop(process); }
};

std::optional<tunefleet::v1::ListDevicesResponse> Devices(Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  tunefleet::v1::ListDevicesResponse response;
  if (!stub.ListDevices(&context, {}, &response).ok()) return std::nullopt;
  return response;
}

// Errors: UNAVAILABLE when the server does not start or answer within 30 s.
absl::StatusOr<std::unique_ptr<LocalServer>> StartServer(
    const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  auto server = std::make_unique<LocalServer>();
  server->dir = dir;
  server->address = absl::StrCat("127.0.0.1:", testing::FreePort());
  base::Subprocess::Options spawn;
  spawn.output_path = (dir / "server.log").string();
  absl::StatusOr<base::Subprocess> process = base::Subprocess::Spawn(
      {SiblingOr("tunefleet-server", TUNEFLEET_SERVER_BINARY), "--listen",
       server->address, "--db", (dir / "model.db").string(), "--no-auth"},
      spawn);
  if (!process.ok()) return process.status();
  server->process = *std::move(process);
  server->stub = tunefleet::v1::TuningService::NewStub(
      grpc::CreateChannel(server->address, grpc::InsecureChannelCredentials()));
  const auto end = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < end) {
    if (Devices(*server->stub)) return server;
    base::ExitStatus exit;
    if (server->process.Exited(&exit)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError(
      absl::StrCat("tunefleet-server did not answer on ", server->address,
                   "; its log: ", spawn.output_path));
}

// Polls until `n` agents are connected under `key` (any key when empty);
// that key's device info. Errors: DEADLINE_EXCEEDED after `limit`.
absl::StatusOr<tunefleet::v1::DeviceStatus> AwaitAgents(
    Stub& stub, const std::string& key, uint32_t n, std::chrono::seconds limit,
    base::Subprocess* agent_process = nullptr) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (auto devices = Devices(stub)) {
      for (const auto& d : devices->devices()) {
        if ((key.empty() || d.device_key() == key) &&
            d.connected_agents() >= n) {
          return d;
        }
      }
    }
    base::ExitStatus exit;
    if (agent_process != nullptr && agent_process->Exited(&exit)) {
      return absl::UnavailableError(
          absl::StrCat("tunefleet-agent ended (", exit.ToString(), ")"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat(n, " agent(s) did not connect"));
}

// One model job from submission to its end.
struct RunResult {
  std::string label;
  double wall_s = 0;    // from the submission to the end of the model job
  double submit_s = 0;  // of wall_s, until SubmitModelJob answered
  JobProgress last;     // its final progress, with every task and the history
  // The latency history (the server keeps complete estimates only).
  std::vector<LatencyPoint> series;
  int skipped = 0;
};

double Ms(double ns) { return ns / 1e6; }

// Submits `request` and watches the model job to its end.
absl::StatusOr<RunResult> RunModelJob(Stub& stub,
                                      const SubmitModelJobRequest& request,
                                      const std::string& label) {
  RunResult r;
  r.label = label;
  const auto t0 = Clock::now();
  grpc::ClientContext submit_context;
  tunefleet::v1::SubmitModelJobResponse submitted;
  const grpc::Status s =
      stub.SubmitModelJob(&submit_context, request, &submitted);
  if (!s.ok()) {
    return absl::Status(
        static_cast<absl::StatusCode>(s.error_code()),
        absl::StrCat(label, ": SubmitModelJob: ", s.error_message()));
  }
  r.submit_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.skipped = submitted.skipped_size();
  for (const auto& skip : submitted.skipped()) {
    Note(absl::StrCat(label, ": task ", skip.task_index(),
                      " skipped: ", skip.reason()));
  }
  grpc::ClientContext watch_context;
  tunefleet::v1::WatchJobRequest watch;
  watch.set_job_id(submitted.job_id());
  auto reader = stub.WatchJob(&watch_context, watch);
  JobProgress p;
  uint32_t next_note = 1;  // the next tenth of the budget to note
  while (reader->Read(&p)) {
    while (next_note <= 10 &&
           p.trials_done() * 10 >= next_note * request.trials()) {
      Note(absl::StrFormat(
          "%s: %u/%u trials, %.3f ms%s, %.1f s", label, p.trials_done(),
          request.trials(), Ms(p.model().latency_ns()),
          p.model().latency_complete() ? "" : " (partial)",
          std::chrono::duration<double>(Clock::now() - t0).count()));
      ++next_note;
    }
  }
  const grpc::Status watched = reader->Finish();
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!watched.ok()) {
    return absl::UnavailableError(
        absl::StrCat(label, ": WatchJob: ", watched.error_message()));
  }
  // The final progress with the whole history.
  grpc::ClientContext get_context;
  tunefleet::v1::GetJobRequest get;
  get.set_job_id(submitted.job_id());
  const grpc::Status got = stub.GetJob(&get_context, get, &r.last);
  if (!got.ok()) r.last = p;
  const auto& history = r.last.model().latency_history();
  r.series.assign(history.begin(), history.end());
  if (r.last.state() != tunefleet::v1::JOB_STATE_DONE) {
    Note(absl::StrCat(label, ": the model job ended ",
                      contract::JobStateName(r.last.state()), ": ",
                      r.last.message()));
  }
  return r;
}

// The estimate after `trials` trials: the last complete point at or before
// them; nullopt before the first.
std::optional<double> LatencyAt(const std::vector<LatencyPoint>& series,
                                uint32_t trials) {
  std::optional<double> at;
  for (const LatencyPoint& point : series) {
    if (point.trials_done() > trials) break;
    at = point.latency_ns();
  }
  return at;
}

// Trials after which the estimate is first at or below `target_ns`.
std::optional<uint32_t> TrialsToReach(const std::vector<LatencyPoint>& series,
                                      double target_ns) {
  for (const LatencyPoint& point : series) {
    if (point.latency_ns() <= target_ns) return point.trials_done();
  }
  return std::nullopt;
}

double FinalLatencyNs(const RunResult& r) {
  return r.series.empty() ? 0 : r.series.back().latency_ns();
}

// A run's series divided by its naive latency: the comparison without the
// machine's speed during each run (on a CPU device that the server and
// other processes share, one run's kernel times can differ from another's
// by up to 2x).
std::vector<LatencyPoint> Relative(const RunResult& r) {
  const double naive = r.last.model().naive_latency_ns();
  std::vector<LatencyPoint> out = r.series;
  for (LatencyPoint& p : out) {
    p.set_latency_ns(naive > 0 ? p.latency_ns() / naive : 0);
  }
  return out;
}

std::string Text(std::optional<double> v, double scale) {
  return v ? absl::StrFormat("%.3f", *v * scale) : "-";
}

nlohmann::json Json(std::optional<double> v, double scale) {
  return v ? nlohmann::json(*v * scale) : nlohmann::json(nullptr);
}

// The estimated latency of both runs every 10% of the budget, in ms and as
// a fraction of each run's naive latency.
nlohmann::json Table(const RunResult& uniform, const RunResult& scheduler,
                     uint32_t budget, std::string* text) {
  absl::StrAppend(
      text, absl::StrFormat("%8s %5s %12s %14s %13s %15s\n", "trials", "%",
                            "uniform ms", "scheduler ms", "uniform/naive",
                            "scheduler/naive"));
  const std::vector<LatencyPoint> u_rel = Relative(uniform);
  const std::vector<LatencyPoint> s_rel = Relative(scheduler);
  nlohmann::json table = nlohmann::json::array();
  for (uint32_t k = 1; k <= 10; ++k) {
    const uint32_t t = (budget * k + 9) / 10;
    const auto u = LatencyAt(uniform.series, t);
    const auto s = LatencyAt(scheduler.series, t);
    const auto ur = LatencyAt(u_rel, t);
    const auto sr = LatencyAt(s_rel, t);
    absl::StrAppend(text, absl::StrFormat("%8u %4u%% %12s %14s %13s %15s\n", t,
                                          k * 10, Text(u, 1e-6), Text(s, 1e-6),
                                          Text(ur, 1), Text(sr, 1)));
    table.push_back({{"trials", t},
                     {"uniform_ms", Json(u, 1e-6)},
                     {"scheduler_ms", Json(s, 1e-6)},
                     {"uniform_relative", Json(ur, 1)},
                     {"scheduler_relative", Json(sr, 1)}});
  }
  return table;
}

// When the scheduler's series first reaches the uniform one's final value
// (shown x `scale` in `unit`).
nlohmann::json Reach(const std::vector<LatencyPoint>& uniform,
                     const std::vector<LatencyPoint>& scheduler,
                     uint32_t budget, double scale, const std::string& unit,
                     std::string* text) {
  const double target = uniform.empty() ? 0 : uniform.back().latency_ns();
  const auto reach =
      target > 0 ? TrialsToReach(scheduler, target) : std::nullopt;
  if (reach) {
    absl::StrAppend(
        text,
        absl::StrFormat("scheduler reaches uniform's final %.3f %s "
                        "after %u trials (%.1f%% of the budget)\n",
                        target * scale, unit, *reach, 100.0 * *reach / budget));
  } else {
    absl::StrAppend(
        text,
        absl::StrFormat(
            "scheduler does not reach uniform's final %.3f "
            "%s within the budget (its final: %.3f)\n",
            target * scale, unit,
            scheduler.empty() ? 0.0 : scheduler.back().latency_ns() * scale));
  }
  return {{"uniform_final", target * scale},
          {"unit", unit},
          {"trials", reach ? nlohmann::json(*reach) : nlohmann::json(nullptr)},
          {"fraction_of_budget", reach ? nlohmann::json(*reach / double(budget))
                                       : nlohmann::json(nullptr)}};
}

// Run A or B: a fresh server and one real tunefleet-agent process on this
// machine's OpenCL device.
absl::StatusOr<RunResult> RealRun(const std::filesystem::path& dir,
                                  const Flags& f, SubmitModelJobRequest request,
                                  tunefleet::v1::TaskScheduler scheduler,
                                  const std::string& label,
                                  std::string* device_name) {
  absl::StatusOr<std::unique_ptr<LocalServer>> server = StartServer(dir);
  if (!server.ok()) return server.status();
  base::Subprocess::Options spawn;
  spawn.output_path = (dir / "agent.log").string();
  // No persistent binary cache, neither the agent's nor PoCL's own kernel
  // cache (ignored by other drivers): run B must not build faster for what
  // run A (or an earlier run) built.
  spawn.env = {"POCL_KERNEL_CACHE=0"};
  absl::StatusOr<base::Subprocess> agent = base::Subprocess::Spawn(
      {SiblingOr("tunefleet-agent", TUNEFLEET_AGENT_BINARY), "--server",
       (*server)->address, "--name", absl::StrCat("model-tuning-", label),
       "--platform", absl::StrCat(f.platform), "--device",
       absl::StrCat(f.device), "--no-binary-cache", "--exit-with-parent"},
      spawn);
  if (!agent.ok()) return agent.status();
  absl::StatusOr<tunefleet::v1::DeviceStatus> device =
      AwaitAgents(*(*server)->stub, "", 1, std::chrono::seconds(120), &*agent);
  if (!device.ok()) {
    return absl::Status(device.status().code(),
                        absl::StrCat(label, ": ", device.status().message(),
                                     "; its log: ", spawn.output_path));
  }
  *device_name = device->device().device_name();
  request.set_device_key(device->device_key());
  request.set_task_scheduler(scheduler);
  absl::StatusOr<RunResult> result =
      RunModelJob(*(*server)->stub, request, label);
  Stop(*agent);
  return result;
}

// The scaling row: `agents` agents in this process with FakeBackend.
absl::StatusOr<RunResult> FakeRun(const std::filesystem::path& dir,
                                  const Flags& f, SubmitModelJobRequest request,
                                  int agents) {
  absl::StatusOr<std::unique_ptr<LocalServer>> server = StartServer(dir);
  if (!server.ok()) return server.status();
  std::vector<std::unique_ptr<device_agent::Agent>> fleet;
  std::vector<std::thread> threads;
  for (int i = 0; i < agents; ++i) {
    device_agent::AgentOptions o;
    o.server = (*server)->address;
    o.device_key = kFakeKey;
    o.agent_name = absl::StrCat(kFakeKey, "-", i);
    o.verbose = false;
    fleet.push_back(std::make_unique<device_agent::Agent>(
        o, std::make_unique<device_agent::FakeBackend>(
               device_agent::FakeBackend::FakeDevice("bench/model_tuning"),
               f.fake_delay_ms * 1000)));
    threads.emplace_back([a = fleet.back().get()] {
      if (const absl::Status ended = a->Run(); !ended.ok()) {
        Note(absl::StrCat("fake agent ended: ", ended.message()));
      }
    });
  }
  const absl::Status connected =
      AwaitAgents(*(*server)->stub, kFakeKey, agents, std::chrono::seconds(30))
          .status();
  request.set_device_key(kFakeKey);
  request.set_task_scheduler(tunefleet::v1::TASK_SCHEDULER_GRADIENT);
  absl::StatusOr<RunResult> result =
      connected.ok()
          ? RunModelJob(*(*server)->stub, request,
                        absl::StrCat("fake backend, ", agents, " agent(s)"))
          : absl::StatusOr<RunResult>(connected);
  for (auto& a : fleet) a->Stop();
  for (auto& t : threads) t.join();
  return result;
}

nlohmann::json RunJson(const RunResult& r) {
  const tunefleet::v1::ModelProgress& m = r.last.model();
  return {{"state", contract::JobStateName(r.last.state())},
          {"wall_s", r.wall_s},
          {"submit_s", r.submit_s},
          {"trials_done", r.last.trials_done()},
          {"tasks", m.tasks()},
          {"tasks_stopped", m.tasks_stopped()},
          {"skipped", r.skipped},
          {"naive_latency_ms", Ms(m.naive_latency_ns())},
          {"final_latency_ms", Ms(FinalLatencyNs(r))},
          {"latency_complete", m.latency_complete()}};
}

int Main(int argc, char** argv) {
  CLI::App app{
      "model_tuning: a model's estimated latency against trials spent, with "
      "the budget spread uniformly (round robin) and by the task scheduler "
      "(gradient), on this machine's OpenCL device; and a model job's wall "
      "time with 1 and 2 agents of a fake measurement backend"};
  Flags f;
  app.add_option("--onnx", f.onnx,
                 "ONNX model (default: the PP-OCR cls model in .cache/models, "
                 "from deploy/fetch-model.sh)");
  app.add_option("--input-shape", f.input_shapes,
                 "dims of an input, NAME=D1,D2,... (default for the cls "
                 "model: x=1,3,48,192)");
  // The options below show their defaults in --help.
  app.option_defaults()->always_capture_default();
  app.add_option("--trials-per-task", f.trials_per_task,
                 "the budget is this x the model's tasks")
      ->check(CLI::Range(1, 10000));
  app.add_option("--seed", f.seed, "of the strategies and the scheduler");
  app.add_option("--strategy", f.strategy, "each task's search strategy");
  app.add_option("--batch-trials", f.batch_trials,
                 "trials per grant (0: the server's choice)");
  app.add_option("--platform", f.platform, "OpenCL platform index");
  app.add_option("--device", f.device, "OpenCL device index");
  app.add_option("--fake-delay-ms", f.fake_delay_ms,
                 "the fake backend's time per measurement (scaling row)")
      ->check(CLI::Range(0, 10000));
  app.add_option("--only", f.only,
                 "real: runs A and B only; fake: the scaling row only")
      ->check(CLI::IsMember({"all", "real", "fake"}));
  app.add_flag("--json", f.json, "print all figures as one JSON object");
  CLI11_PARSE(app, argc, argv);

  if (f.onnx.empty()) {
    f.onnx = kDefaultModel;
    if (f.input_shapes.empty()) f.input_shapes = {kDefaultInputShape};
    if (!std::filesystem::exists(f.onnx)) {
      std::fprintf(stderr,
                   "model_tuning: %s is missing; fetch it with `bash "
                   "deploy/fetch-model.sh` (into the git-ignored "
                   ".cache/models) or pass --onnx FILE\n",
                   f.onnx.c_str());
      return 2;
    }
  }
  absl::StatusOr<tunefleet::v1::Strategy> strategy =
      contract::ParseStrategy(f.strategy);
  if (!strategy.ok()) {
    std::fprintf(stderr, "model_tuning: %s\n",
                 std::string(strategy.status().message()).c_str());
    return 2;
  }
  onnx_import::InputShapes shapes;
  for (const std::string& s : f.input_shapes) {
    if (absl::Status st = onnx_import::ParseInputShape(s, &shapes); !st.ok()) {
      std::fprintf(stderr, "model_tuning: %s\n",
                   std::string(st.message()).c_str());
      return 2;
    }
  }
  absl::StatusOr<onnx_import::ModelTasks> model =
      onnx_import::ImportOnnx(f.onnx, shapes);
  if (!model.ok() || model->tasks.empty()) {
    std::fprintf(stderr, "model_tuning: %s\n",
                 model.ok() ? "the model has no task to tune"
                            : std::string(model.status().message()).c_str());
    return 2;
  }

  // Generated templates only (the op's default; no library template), so
  // that both runs tune the same tasks.
  SubmitModelJobRequest request;
  request.set_model_name(std::filesystem::path(f.onnx).filename().string());
  for (const onnx_import::ModelTask& task : model->tasks) {
    tunefleet::v1::ModelTask* t = request.add_tasks();
    *t->mutable_workload() = trial::WorkloadToProto(task.workload);
    t->set_weight(static_cast<uint32_t>(task.count));
  }
  const uint32_t tasks = static_cast<uint32_t>(model->tasks.size());
  const uint32_t budget = f.trials_per_task * tasks;
  request.set_trials(budget);
  request.set_strategy(*strategy);
  request.set_seed(f.seed);
  request.set_no_transfer(true);
  request.set_batch_trials(f.batch_trials);

  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    absl::StrCat("tf_model_tuning_", getpid());
  std::filesystem::create_directories(dir);
  Note(absl::StrCat(request.model_name(), ": ", tasks, " tasks, budget ",
                    budget, " trials (", f.trials_per_task,
                    " per task), strategy ", f.strategy, ", seed ", f.seed,
                    "; work in ", dir.string()));

  nlohmann::json out = {{"model", request.model_name()},
                        {"tasks", tasks},
                        {"trials_per_task", f.trials_per_task},
                        {"budget", budget},
                        {"strategy", f.strategy},
                        {"seed", f.seed}};
  int exit_code = 0;
  std::string text;  // the human-readable report
  if (f.only != "fake") {
    std::string device_name;
    absl::StatusOr<RunResult> uniform = RealRun(
        dir / "uniform", f, request, tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN,
        "uniform", &device_name);
    absl::StatusOr<RunResult> gradient =
        uniform.ok() ? RealRun(dir / "scheduler", f, request,
                               tunefleet::v1::TASK_SCHEDULER_GRADIENT,
                               "scheduler", &device_name)
                     : uniform;
    if (!gradient.ok()) {
      Note(std::string(gradient.status().message()));
      exit_code = 1;
    } else {
      out["device"] = device_name;
      out["uniform"] = RunJson(*uniform);
      out["scheduler"] = RunJson(*gradient);
      absl::StrAppend(
          &text,
          absl::StrFormat(
              "model_tuning: %s, %u tasks (generated templates), budget %u "
              "trials (%u per task), strategy %s, seed %u\n"
              "device: %s (one tunefleet-agent process)\n",
              request.model_name(), tasks, budget, f.trials_per_task,
              f.strategy, f.seed, device_name));
      for (const RunResult* r : {&*uniform, &*gradient}) {
        absl::StrAppend(
            &text,
            absl::StrFormat(
                "run %-9s (%s): %s, %u trials in %.1f s (submit %.1f s), "
                "naive %.3f ms -> %.3f ms, %u of %u tasks stopped\n",
                r->label,
                contract::TaskSchedulerName(r->last.model().task_scheduler()),
                contract::JobStateName(r->last.state()), r->last.trials_done(),
                r->wall_s, r->submit_s, Ms(r->last.model().naive_latency_ns()),
                Ms(FinalLatencyNs(*r)), r->last.model().tasks_stopped(),
                r->last.model().tasks()));
      }
      out["table"] = Table(*uniform, *gradient, budget, &text);
      out["reach"] =
          Reach(uniform->series, gradient->series, budget, 1e-6, "ms", &text);
      out["reach_relative"] = Reach(Relative(*uniform), Relative(*gradient),
                                    budget, 1, "x its naive latency", &text);
    }
  }
  if (f.only != "real") {
    std::vector<RunResult> runs;
    for (int agents : {1, 2}) {
      absl::StatusOr<RunResult> r =
          FakeRun(dir / absl::StrCat("fake", agents), f, request, agents);
      if (!r.ok()) {
        Note(std::string(r.status().message()));
        exit_code = 1;
        break;
      }
      runs.push_back(*std::move(r));
    }
    if (runs.size() == 2) {
      auto ratio = [](double a, double b) { return b > 0 ? a / b : 0; };
      // Without the submission (the server preparing every task's search
      // space), which no agent can speed up.
      auto tuning_s = [](const RunResult& r) { return r.wall_s - r.submit_s; };
      const double speedup = ratio(runs[0].wall_s, runs[1].wall_s);
      const double tuning_speedup = ratio(tuning_s(runs[0]), tuning_s(runs[1]));
      absl::StrAppend(
          &text,
          absl::StrFormat("scaling, fake backend (%d ms per measurement, no "
                          "OpenCL), gradient, budget %u:\n",
                          f.fake_delay_ms, budget));
      for (const RunResult& r : runs) {
        absl::StrAppend(
            &text,
            absl::StrFormat("  %-26s %6.2f s wall (submit %.2f s + tuning "
                            "%.2f s), %u trials\n",
                            r.label, r.wall_s, r.submit_s, tuning_s(r),
                            r.last.trials_done()));
      }
      absl::StrAppend(
          &text, absl::StrFormat("  speedup with 2 agents: %.2fx wall, %.2fx "
                                 "tuning (after the submission)\n",
                                 speedup, tuning_speedup));
      out["scaling"] = {{"backend", "fake"},
                        {"fake_delay_ms", f.fake_delay_ms},
                        {"task_scheduler", "gradient"},
                        {"agents_1", RunJson(runs[0])},
                        {"agents_2", RunJson(runs[1])},
                        {"tuning_speedup", tuning_speedup},
                        {"speedup", speedup}};
    }
  }
  if (f.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << text;
  }
  if (std::getenv("TUNEFLEET_KEEP_BENCH_DIR") == nullptr) {
    std::filesystem::remove_all(dir);
  }
  return exit_code;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
