// A fleet of real processes for chaos tests: tunefleet-server and
// tunefleet-agent binaries from the build tree on loopback, a SQLite file
// in a fresh directory, and a TuningService client. The server takes a
// tokens file (agent, tuner and reader tokens); agents and the client
// present tokens of their roles. Agents measure on the first OpenCL device
// (PoCL in CI).
#ifndef TUNEFLEET_TESTS_FLEET_HARNESS_H_
#define TUNEFLEET_TESTS_FLEET_HARNESS_H_

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "auth/tokens.h"
#include "client/channel.h"
#include "contract/names.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "tests/support/command_runner.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {

// How long the fleet tests wait for a small job to end or reach a count of
// trials (AwaitEnd, AwaitTrialsDone): a bound against a hung test, far
// above what a job takes on PoCL, not a figure the tests check.
inline constexpr auto kFleetJobLimit = std::chrono::seconds(240);

// True once `progress` is there and its job has ended (done, failed or
// cancelled).
inline bool JobEnded(
    const std::optional<tunefleet::v1::JobProgress>& progress) {
  return progress && contract::IsFinalJobState(progress->state());
}

// The timing policy of a test job that needs results, not good times: one
// round of one launch, no minimum round length; each trial adds
// `cooldown_ms` (ms) of idle time on the agent (TimingPolicy.cooldown_ms).
inline tunefleet::v1::TimingPolicy QuickTiming(double cooldown_ms = 0) {
  tunefleet::v1::TimingPolicy timing;
  timing.set_repeat(1);
  timing.set_number(1);
  timing.set_min_repeat_ms(0);
  timing.set_cooldown_ms(cooldown_ms);
  return timing;
}

// Sets in `r` (a SubmitJobRequest or a SubmitModelJobRequest) the search
// of a quick test job for device key `key`: random search of `trials`
// trials seeded with `seed`, no transfer, QuickTiming(cooldown_ms).
template <typename Request>
void SetQuickRandomSearch(const std::string& key, uint32_t trials,
                          uint64_t seed, double cooldown_ms, Request* r) {
  r->set_device_key(key);
  r->set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r->set_trials(trials);
  r->set_seed(seed);
  r->set_no_transfer(true);
  *r->mutable_timing() = QuickTiming(cooldown_ms);
}

// A small random-search GEMM job (M=40,N=24,K=32, no reference, no
// transfer, QuickTiming(cooldown_ms)) for device key `key`; a cooldown
// makes the job last long enough to be disturbed.
inline tunefleet::v1::SubmitJobRequest SmallGemmJob(const std::string& key,
                                                    uint32_t trials,
                                                    double cooldown_ms,
                                                    uint64_t seed) {
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("gemm", "M=40,N=24,K=32"));
  SetQuickRandomSearch(key, trials, seed, cooldown_ms, &r);
  r.set_skip_reference(true);
  return r;
}

// Not thread-safe; one test drives it.
class FleetHarness {
 public:
  explicit FleetHarness(const std::string& name, int heartbeat_ms = 300)
      : heartbeat_ms_(heartbeat_ms), port_(FreePort()) {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("tf_", name, "_", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // An agent token (in a file, as a board keeps it), a tuner token and
    // a reader token.
    agent_token_ = *auth::GenerateToken();
    tuner_token_ = *auth::GenerateToken();
    reader_token_ = *auth::GenerateToken();
    (void)auth::AppendTokenToFile(
        tokens_file(),
        auth::TokenEntry::ForToken(agent_token_, auth::Role::kAgent, "agents"));
    (void)auth::AppendTokenToFile(
        tokens_file(), auth::TokenEntry::ForToken(
                           tuner_token_, auth::Role::kTuner, "harness"));
    (void)auth::AppendTokenToFile(
        tokens_file(),
        auth::TokenEntry::ForToken(reader_token_, auth::Role::kReader,
                                   "harness-reader"));
    std::ofstream(agent_token_file()) << agent_token_ << "\n";
    std::filesystem::permissions(agent_token_file(),
                                 std::filesystem::perms::owner_read |
                                     std::filesystem::perms::owner_write);
  }
  ~FleetHarness() {
    agents_.clear();
    server_.reset();
    if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
      std::filesystem::remove_all(dir_);
    }
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int port() const { return port_; }
  // Agent `i`'s log (appended to across restarts).
  std::string agent_log(size_t i) const {
    return (dir_ / absl::StrCat("agent-", i, ".log")).string();
  }
  std::string db_path() const { return (dir_ / "fleet.db").string(); }
  std::string dir() const { return dir_.string(); }
  std::string tokens_file() const { return (dir_ / "tokens.txt").string(); }
  std::string agent_token_file() const {
    return (dir_ / "agent.token").string();
  }
  const std::string& agent_token() const { return agent_token_; }
  const std::string& tuner_token() const { return tuner_token_; }
  const std::string& reader_token() const { return reader_token_; }
  // A new token of `role` named `name`, added to the tokens file (before
  // the server starts) and written alone to <dir>/<name>.token; that
  // file's path.
  std::string AddTokenFile(auth::Role role, const std::string& name) {
    const std::string token = *auth::GenerateToken();
    EXPECT_TRUE(
        auth::AppendTokenToFile(tokens_file(),
                                auth::TokenEntry::ForToken(token, role, name))
            .ok());
    const std::string file = dir() + "/" + name + ".token";
    std::ofstream(file) << token << "\n";
    return file;
  }

  // Starts (or restarts) the server on the same port and database, with
  // `extra_args` after the harness's own (e.g. --http; with --no-auth the
  // tokens file is not given); true once it answers.
  bool StartServer(const std::vector<std::string>& extra_args = {}) {
    std::vector<std::string> argv = {BinaryDir() + "/server/tunefleet-server",
                                     "--listen",
                                     address(),
                                     "--db",
                                     db_path(),
                                     "--heartbeat-ms",
                                     std::to_string(heartbeat_ms_)};
    if (std::find(extra_args.begin(), extra_args.end(), "--no-auth") ==
        extra_args.end()) {
      argv.insert(argv.end(), {"--tokens", tokens_file()});
    }
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    server_ = std::make_unique<Process>(argv, (dir_ / "server.log").string());
    return WaitFor([this] { return Devices().has_value(); },
                   std::chrono::seconds(30));
  }
  Process& server() { return *server_; }

  // Starts agent `i` (or restarts it after a kill) with device key `key`,
  // dialling `server` (HOST:PORT; empty: address(), a proxy's otherwise).
  void StartAgent(size_t i, const std::string& key = "chaos",
                  int max_in_flight = 2, const std::string& server = "") {
    if (agents_.size() <= i) agents_.resize(i + 1);
    agents_[i] = std::make_unique<Process>(
        std::vector<std::string>{
            BinaryDir() + "/device_agent/tunefleet-agent", "--server",
            server.empty() ? address() : server, "--key", key, "--name",
            absl::StrCat("agent-", i), "--max-in-flight",
            std::to_string(max_in_flight), "--token-file", agent_token_file()},
        agent_log(i));
  }
  Process& agent(size_t i) { return *agents_[i]; }

  // Starts agents 0..`agents`-1 with device key `key`; true once all are
  // connected (within a minute).
  bool StartAgents(size_t agents, const std::string& key,
                   int max_in_flight = 2) {
    for (size_t i = 0; i < agents; ++i) StartAgent(i, key, max_in_flight);
    return WaitFor([&] { return Connected(key) == static_cast<int>(agents); },
                   std::chrono::seconds(60));
  }
  // StartServer, then StartAgents.
  bool StartFleet(size_t agents, const std::string& key,
                  int max_in_flight = 2) {
    return StartServer() && StartAgents(agents, key, max_in_flight);
  }

  // A stub of `Service` (tunefleet::v1::TuningService, AgentService) on
  // the server that calls with `token`.
  template <typename Service>
  std::unique_ptr<typename Service::Stub> StubAs(
      const std::string& token) const {
    client::ChannelOptions channel;
    channel.token = token;
    return Service::NewStub(client::CreateServerChannel(address(), channel));
  }
  // A TuningService stub with the tuner token.
  std::unique_ptr<tunefleet::v1::TuningService::Stub> Stub() const {
    return StubAs<tunefleet::v1::TuningService>(tuner_token_);
  }

  // Submits `request` with the tuner token (deadline 20 s); the job id goes
  // to `job_id`.
  grpc::Status SubmitJob(const tunefleet::v1::SubmitJobRequest& request,
                         int64_t* job_id) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(20));
    tunefleet::v1::SubmitJobResponse response;
    const grpc::Status s = Stub()->SubmitJob(&context, request, &response);
    *job_id = response.job_id();
    return s;
  }
  // SubmitJob that expects success; the job id (0 when refused).
  int64_t Submit(const tunefleet::v1::SubmitJobRequest& request) const {
    int64_t job_id = 0;
    const grpc::Status s = SubmitJob(request, &job_id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return job_id;
  }

  // Cancels the job with the tuner token; the call's status, and the
  // progress it answered in *progress when given.
  grpc::Status Cancel(int64_t job_id,
                      tunefleet::v1::JobProgress* progress = nullptr) const {
    grpc::ClientContext context;
    tunefleet::v1::CancelJobRequest request;
    request.set_job_id(job_id);
    tunefleet::v1::JobProgress answer;
    const grpc::Status s = Stub()->CancelJob(&context, request, &answer);
    if (progress != nullptr) *progress = answer;
    return s;
  }

  // The server's device list; nullopt while it does not answer.
  std::optional<tunefleet::v1::ListDevicesResponse> Devices() const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    tunefleet::v1::ListDevicesResponse response;
    if (!Stub()->ListDevices(&context, {}, &response).ok()) return std::nullopt;
    return response;
  }
  // Agents connected under `key`.
  int Connected(const std::string& key) const {
    auto devices = Devices();
    if (!devices) return -1;
    for (const auto& d : devices->devices()) {
      if (d.device_key() == key) return static_cast<int>(d.connected_agents());
    }
    return 0;
  }

  // The job's progress; nullopt while the server does not answer.
  std::optional<tunefleet::v1::JobProgress> Job(int64_t job_id) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    tunefleet::v1::ListJobsResponse response;
    if (!Stub()->ListJobs(&context, {}, &response).ok()) return std::nullopt;
    for (const auto& j : response.jobs()) {
      if (j.job_id() == job_id) return j;
    }
    return std::nullopt;
  }

  // The job's whole progress through GetJob (a model job's tasks' too);
  // nullopt when the server does not answer within `deadline`.
  std::optional<tunefleet::v1::JobProgress> GetJob(
      int64_t job_id,
      std::chrono::seconds deadline = std::chrono::seconds(2)) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    tunefleet::v1::GetJobRequest request;
    request.set_job_id(job_id);
    tunefleet::v1::JobProgress progress;
    if (!Stub()->GetJob(&context, request, &progress).ok()) {
      return std::nullopt;
    }
    return progress;
  }

  // Waits up to `limit` until the job (a model job too: GetJob) counts at
  // least `trials` finished trials; true once it does.
  bool AwaitTrialsDone(int64_t job_id, uint32_t trials,
                       std::chrono::milliseconds limit) const {
    return WaitFor(
        [&] {
          auto p = GetJob(job_id);
          return p && p->trials_done() >= trials;
        },
        limit);
  }

  // Waits up to `limit` for the job to end; its last progress, or nullopt
  // when it did not end in time.
  std::optional<tunefleet::v1::JobProgress> AwaitEnd(
      int64_t job_id, std::chrono::milliseconds limit) const {
    std::optional<tunefleet::v1::JobProgress> last;
    WaitFor(
        [&] {
          last = Job(job_id);
          return JobEnded(last);
        },
        limit);
    if (!JobEnded(last)) return std::nullopt;
    return last;
  }

  // Polls `done` every 50 ms until true or `limit` passes.
  static bool WaitFor(const std::function<bool()>& done,
                      std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }

 private:
  int heartbeat_ms_;
  int port_;
  std::string agent_token_;
  std::string tuner_token_;
  std::string reader_token_;
  std::filesystem::path dir_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> agents_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_FLEET_HARNESS_H_
