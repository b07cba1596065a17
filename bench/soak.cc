// bench/soak: tunefleet-server under a long, hostile day. A real
// tunefleet-server process (SQLite store in a temp directory) serves
// --agents fake agents (device_agent's FakeBackend over real gRPC on
// loopback, as bench/fleet_load) run in --groups child processes of this
// binary. For --minutes it keeps --jobs jobs running (submitting a new one
// as each ends), makes agents leave and join (each group replaces a random
// agent every --churn-ms), SIGKILLs a whole agent group every --agent-kill-s
// (restarted at once), and SIGKILLs the server every --server-kill-s,
// restarting it on the same database (it resumes its jobs). It prints the
// server's RSS (VmRSS, /proc/PID/status) and open descriptors
// (/proc/PID/fd) at the start, at each restart and at the end, and then
// checks the database: every trial of every job done exactly once
// ("trials lost" counts the budget of done jobs not measured, plus trials
// left pending or leased, plus jobs that failed; 0 expected).
//
// Usage: soak [--minutes 30] [--agents 1000] [--groups 10] [--jobs 4]
//             [--trials 300] [--server-kill-s 60] [--agent-kill-s 10]
//             [--churn-ms 500] [--delay-us 20000] [--sample-s 30]
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "kernels_templates/workload.h"
#include "store/sqlite.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using tunefleet::base::Subprocess;

constexpr char kKey[] = "soak";

std::atomic<bool> g_stop{false};
void OnTerm(int) { g_stop = true; }

// ---- The agent group (a child process of this binary) ----

// One fake agent on its own thread, Stop()ped and joined on destruction.
class FakeAgent {
 public:
  FakeAgent(const std::string& address, const std::string& name, int index,
            int delay_us) {
    tunefleet::device_agent::AgentOptions o;
    o.server = address;
    o.device_key = kKey;
    o.agent_name = name;
    o.verbose = false;
    o.max_backoff = absl::Seconds(2);
    // gRPC shares one TCP connection among channels to the same target
    // with the same arguments (its global subchannel pool); an argument of
    // its own per agent gives each agent its own connection, as agents on
    // separate devices have.
    o.channel.max_receive_message_bytes = (64 << 20) + index;
    agent_ = std::make_unique<tunefleet::device_agent::Agent>(
        o, std::make_unique<tunefleet::device_agent::FakeBackend>(
               tunefleet::device_agent::FakeBackend::FakeDevice("bench/soak"),
               delay_us));
    thread_ = std::thread([a = agent_.get()] { (void)a->Run(); });
  }
  ~FakeAgent() {
    agent_->Stop();
    thread_.join();
  }
  FakeAgent(const FakeAgent&) = delete;
  FakeAgent& operator=(const FakeAgent&) = delete;

 private:
  std::unique_ptr<tunefleet::device_agent::Agent> agent_;
  std::thread thread_;
};

// Runs `count` agents until SIGTERM (or SIGKILL); every `churn_ms` one of
// them leaves and a new one joins.
int RunAgentGroup(const std::string& address, int group, int count,
                  int delay_us, int churn_ms) {
  signal(SIGTERM, OnTerm);
  std::vector<std::unique_ptr<FakeAgent>> agents;
  int next = 0;
  auto start = [&] {
    const int index = next++;
    return std::make_unique<FakeAgent>(
        address, absl::StrCat("soak-", group, "-", index), index, delay_us);
  };
  for (int i = 0; i < count; ++i) agents.push_back(start());
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(churn_ms));
    if (churn_ms <= 0 || agents.empty()) continue;
    const size_t victim = rng() % agents.size();
    agents[victim].reset();  // leaves: its stream ends, its leases requeue
    agents[victim] = start();
  }
  agents.clear();
  return 0;
}

// ---- The driver ----

int64_t StatusField(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::atoll(line.c_str() + field.size() + 1);
    }
  }
  return -1;
}

int OpenFds(pid_t pid) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(
           absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return ec ? -1 : n;
}

struct Options {
  double minutes = 30;
  int agents = 1000;
  int groups = 10;
  int jobs = 4;
  uint32_t trials = 300;
  double server_kill_s = 60;
  double agent_kill_s = 10;
  int churn_ms = 500;
  int delay_us = 20000;
  int sample_s = 30;
  std::string server_binary = TUNEFLEET_SERVER_BINARY;
};

class Soak {
 public:
  Soak(Options o, std::string self)
      : o_(o),
        self_(std::move(self)),
        dir_(std::filesystem::temp_directory_path() /
             absl::StrCat("tf_soak_", getpid())) {
    std::filesystem::create_directories(dir_);
    port_ = 20000 + static_cast<int>(getpid() % 20000);
    address_ = absl::StrCat("127.0.0.1:", port_);
  }

  int Run();

 private:
  bool StartServer() {
    Subprocess::Options spawn;
    spawn.output_path = (dir_ / "server.log").string();
    absl::StatusOr<Subprocess> s = Subprocess::Spawn(
        {o_.server_binary, "--listen", address_, "--db", db(), "--no-auth"},
        spawn);
    if (!s.ok()) {
      std::fprintf(stderr, "soak: %s\n",
                   std::string(s.status().message()).c_str());
      return false;
    }
    server_ = std::move(*s);
    for (int i = 0; i < 300; ++i) {
      if (Ping()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  bool Ping() {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    tunefleet::v1::ListDevicesResponse r;
    return stub_->ListDevices(&c, {}, &r).ok();
  }
  int Connected() {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    tunefleet::v1::ListDevicesResponse r;
    if (!stub_->ListDevices(&c, {}, &r).ok()) return -1;
    for (const auto& d : r.devices()) {
      if (d.device_key() == kKey) return static_cast<int>(d.connected_agents());
    }
    return 0;
  }
  void StartGroup(size_t g) {
    const int per = o_.agents / o_.groups +
                    (static_cast<int>(g) < o_.agents % o_.groups ? 1 : 0);
    Subprocess::Options spawn;
    spawn.output_path = (dir_ / absl::StrCat("group-", g, ".log")).string();
    absl::StatusOr<Subprocess> s = Subprocess::Spawn(
        {self_, "--agent-group", std::to_string(g), "--server", address_,
         "--agents", std::to_string(per), "--delay-us",
         std::to_string(o_.delay_us), "--churn-ms",
         std::to_string(o_.churn_ms)},
        spawn);
    if (s.ok()) groups_[g] = std::move(*s);
  }
  // Submits jobs until `o_.jobs` are running; counts ended ones.
  void TopUpJobs() {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    tunefleet::v1::ListJobsRequest request;
    request.set_page_size(200);  // the newest: every running job among them
    tunefleet::v1::ListJobsResponse listed;
    if (!stub_->ListJobs(&c, request, &listed).ok()) return;
    int running = 0;
    for (const auto& j : listed.jobs()) {
      const bool ended = j.state() == tunefleet::v1::JOB_STATE_DONE ||
                         j.state() == tunefleet::v1::JOB_STATE_FAILED ||
                         j.state() == tunefleet::v1::JOB_STATE_CANCELLED;
      if (!ended) ++running;
    }
    for (; running < o_.jobs; ++running) {
      tunefleet::v1::SubmitJobRequest r;
      // Shapes vary so that jobs are different tasks.
      const int m = 64 * (1 + static_cast<int>(submitted_ % 16));
      *r.mutable_workload() = tunefleet::trial::WorkloadToProto(
          *tunefleet::templates::Workload::Parse(
              "gemm", absl::StrCat("M=", m, ",N=512,K=256")));
      r.set_device_key(kKey);
      r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
      r.set_trials(o_.trials);
      r.set_seed(submitted_ + 1);
      r.set_skip_reference(true);
      r.set_no_transfer(true);
      grpc::ClientContext sc;
      sc.set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(10));
      tunefleet::v1::SubmitJobResponse response;
      const grpc::Status s = stub_->SubmitJob(&sc, r, &response);
      if (!s.ok()) {
        ++submit_errors_;
        return;
      }
      ++submitted_;
    }
  }
  void PrintServer(const char* when) {
    const pid_t pid = server_.pid();
    std::printf("soak: %-20s t=%6.1fs  server pid %d  RSS %lld kB  fds %d\n",
                when, Elapsed(), pid,
                static_cast<long long>(StatusField(pid, "VmRSS")),
                OpenFds(pid));
    std::fflush(stdout);
  }
  double Elapsed() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
  }
  std::string db() const { return (dir_ / "soak.db").string(); }
  int Check();
  // PRAGMA integrity_check on the file as a killed server left it: "ok",
  // or SQLite's first complaint.
  std::string IntegrityCheck();

  Options o_;
  std::string self_;
  std::filesystem::path dir_;
  int port_ = 0;
  std::string address_;
  Subprocess server_;
  std::vector<Subprocess> groups_;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
  Clock::time_point t0_;
  int64_t submitted_ = 0;
  int64_t submit_errors_ = 0;
};

int Soak::Run() {
  stub_ = tunefleet::v1::TuningService::NewStub(
      grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  t0_ = Clock::now();
  if (!StartServer()) {
    std::fprintf(stderr, "soak: the server did not start; see %s\n",
                 (dir_ / "server.log").c_str());
    return 1;
  }
  std::printf(
      "soak: %.1f min, %d fake agents in %d groups, %d jobs of %u trials "
      "kept running, server SIGKILL every %.0f s, agent group SIGKILL every "
      "%.0f s, churn every %d ms, fake measurement %d us; files in %s\n",
      o_.minutes, o_.agents, o_.groups, o_.jobs, o_.trials, o_.server_kill_s,
      o_.agent_kill_s, o_.churn_ms, o_.delay_us, dir_.c_str());
  groups_.resize(static_cast<size_t>(o_.groups));
  for (size_t g = 0; g < groups_.size(); ++g) StartGroup(g);
  for (int i = 0; i < 600 && Connected() < o_.agents * 9 / 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("soak: %d agents connected after %.1f s\n", Connected(),
              Elapsed());
  PrintServer("start");
  const auto end = t0_ + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(o_.minutes * 60));
  auto next_server_kill =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o_.server_kill_s));
  auto next_agent_kill =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o_.agent_kill_s));
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  int restarts = 0, group_kills = 0, integrity_ok = 0;
  auto next_sample = Clock::now() + std::chrono::seconds(o_.sample_s);
  while (Clock::now() < end && !g_stop) {
    TopUpJobs();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (o_.sample_s > 0 && Clock::now() >= next_sample) {
      PrintServer(absl::StrCat("sample (", submitted_, " jobs)").c_str());
      next_sample += std::chrono::seconds(o_.sample_s);
    }
    if (o_.agent_kill_s > 0 && Clock::now() >= next_agent_kill) {
      const size_t g = rng() % groups_.size();
      groups_[g].Kill();
      StartGroup(g);
      ++group_kills;
      next_agent_kill += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(o_.agent_kill_s));
    }
    if (o_.server_kill_s > 0 && Clock::now() >= next_server_kill) {
      ++restarts;
      PrintServer(absl::StrCat("kill #", restarts).c_str());
      server_.Kill();
      if (const std::string integrity = IntegrityCheck(); integrity == "ok") {
        ++integrity_ok;
      } else {
        std::printf("soak: integrity_check after kill #%d: %s\n", restarts,
                    integrity.c_str());
      }
      if (!StartServer()) {
        std::fprintf(stderr, "soak: restart %d failed; see %s\n", restarts,
                     (dir_ / "server.log").c_str());
        return 1;
      }
      PrintServer(absl::StrCat("restart #", restarts).c_str());
      next_server_kill += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(o_.server_kill_s));
    }
  }
  // Drain: no new jobs, no more kills; every running job ends.
  std::printf(
      "soak: draining after %.1f s (%d server restarts, integrity_check ok "
      "after %d of them, %d agent group kills, %lld jobs submitted, %lld "
      "refused submits)\n",
      Elapsed(), restarts, integrity_ok, group_kills,
      static_cast<long long>(submitted_),
      static_cast<long long>(submit_errors_));
  const auto drain_end = Clock::now() + std::chrono::minutes(5);
  while (Clock::now() < drain_end) {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    tunefleet::v1::ListJobsRequest request;
    request.set_page_size(200);
    tunefleet::v1::ListJobsResponse listed;
    if (stub_->ListJobs(&c, request, &listed).ok()) {
      int running = 0;
      for (const auto& j : listed.jobs()) {
        if (j.state() == tunefleet::v1::JOB_STATE_QUEUED ||
            j.state() == tunefleet::v1::JOB_STATE_RUNNING) {
          ++running;
        }
      }
      if (running == 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  PrintServer("end");
  for (Subprocess& g : groups_) {
    (void)g.Signal(SIGTERM);
  }
  for (Subprocess& g : groups_) {
    if (!g.Wait(tunefleet::base::DeadlineIn(30000)).ok()) {
      g.Kill();
    }
  }
  (void)server_.Signal(SIGTERM);
  if (!server_.Wait(tunefleet::base::DeadlineIn(30000)).ok()) {
    server_.Kill();
  }
  const int lost = Check();
  if (lost == 0 && std::getenv("TUNEFLEET_KEEP_BENCH_DIR") == nullptr) {
    std::filesystem::remove_all(dir_);
  }
  return lost == 0 && integrity_ok == restarts ? 0 : 1;
}

std::string Soak::IntegrityCheck() {
  absl::StatusOr<tunefleet::store::Database> db =
      tunefleet::store::Database::Open(this->db());
  if (!db.ok()) return std::string(db.status().message());
  absl::StatusOr<tunefleet::store::Statement> check =
      db->Prepare("PRAGMA integrity_check");
  if (!check.ok()) return std::string(check.status().message());
  absl::StatusOr<bool> row = check->Step();
  if (!row.ok()) return std::string(row.status().message());
  return *row ? check->Text(0) : "no answer";
}

// Reads the database: per job, trials done against the budget.
int Soak::Check() {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db().c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "soak: cannot open %s\n", db().c_str());
    sqlite3_close_v2(raw);
    return -1;
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  const char* sql =
      "SELECT j.id, j.state, j.budget, j.message, "
      "  (SELECT count(*) FROM trials t WHERE t.job_id = j.id AND "
      "     t.state = 'done' AND t.error NOT IN ('CANCELLED', 'DEVICE_LOST')),"
      "  (SELECT count(*) FROM trials t WHERE t.job_id = j.id AND "
      "     t.state != 'done'),"
      "  (SELECT count(*) FROM trials t WHERE t.job_id = j.id AND "
      "     t.error = 'DEVICE_LOST'),"
      "  (SELECT count(*) FROM trials t WHERE t.job_id = j.id AND "
      "     t.error = 'CANCELLED') "
      "FROM jobs j ORDER BY j.id";
  sqlite3_stmt* raw_stmt = nullptr;
  if (sqlite3_prepare_v2(db.get(), sql, -1, &raw_stmt, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "soak: %s\n", sqlite3_errmsg(db.get()));
    return -1;
  }
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw_stmt,
                                                             sqlite3_finalize);
  int64_t jobs = 0, done_jobs = 0, trials_done = 0, lost = 0, open = 0,
          device_lost = 0, cancelled = 0, failed_jobs = 0;
  std::map<std::string, int> states;
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    ++jobs;
    const std::string state =
        reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 1));
    const int64_t budget = sqlite3_column_int64(stmt.get(), 2);
    const int64_t done = sqlite3_column_int64(stmt.get(), 4);
    const int64_t left = sqlite3_column_int64(stmt.get(), 5);
    ++states[state];
    trials_done += done;
    open += left;
    device_lost += sqlite3_column_int64(stmt.get(), 6);
    cancelled += sqlite3_column_int64(stmt.get(), 7);
    if (state == "done") {
      ++done_jobs;
      // A done job spent its budget, unless its space ran out or it
      // stopped early; both are rare at these sizes and are shown apart.
      if (done < budget) {
        lost += budget - done;
        std::printf(
            "soak: job %lld done with %lld of %lld trials: %s\n",
            static_cast<long long>(sqlite3_column_int64(stmt.get(), 0)),
            static_cast<long long>(done), static_cast<long long>(budget),
            reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 3)));
      }
    } else if (state == "failed") {
      ++failed_jobs;
      std::printf(
          "soak: job %lld failed: %s\n",
          static_cast<long long>(sqlite3_column_int64(stmt.get(), 0)),
          reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 3)));
    }
  }
  lost += open;
  std::string by_state;
  for (const auto& [s, n] : states) absl::StrAppend(&by_state, " ", s, "=", n);
  std::printf(
      "soak: %lld jobs (%s), %lld trials done, %lld trials lost (%lld left "
      "pending/leased), %lld given up as DEVICE_LOST, %lld cancelled, %lld "
      "jobs failed\n",
      static_cast<long long>(jobs), by_state.c_str(),
      static_cast<long long>(trials_done), static_cast<long long>(lost),
      static_cast<long long>(open), static_cast<long long>(device_lost),
      static_cast<long long>(cancelled), static_cast<long long>(failed_jobs));
  return static_cast<int>(lost + failed_jobs + device_lost);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "soak: a long run of one tunefleet-server with fake agents joining, "
      "leaving and being killed, and the server killed and restarted"};
  Options o;
  int group = -1;
  std::string server;
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--minutes", o.minutes, "how long");
  app.add_option("--agents", o.agents,
                 "fake agents (per group with "
                 "--agent-group)");
  app.add_option("--groups", o.groups, "agent processes");
  app.add_option("--jobs", o.jobs, "jobs kept running");
  app.add_option("--trials", o.trials, "trials per job");
  app.add_option("--server-kill-s", o.server_kill_s,
                 "seconds between server SIGKILLs (0: none)");
  app.add_option("--agent-kill-s", o.agent_kill_s,
                 "seconds between agent group SIGKILLs (0: none)");
  app.add_option("--churn-ms", o.churn_ms,
                 "ms between an agent leaving and a new one joining, per "
                 "group (0: none)");
  app.add_option("--delay-us", o.delay_us, "fake measurement time, us");
  app.add_option("--sample-s", o.sample_s,
                 "seconds between RSS/fd samples (0: none)");
  app.add_option("--server-binary", o.server_binary,
                 "the tunefleet-server to run (default: this build's)");
  // Internal: no default shown.
  app.option_defaults()->always_capture_default(false);
  app.add_option("--agent-group", group, "internal: run as agent group N");
  app.add_option("--server", server, "internal: the server's address");
  CLI11_PARSE(app, argc, argv);
  if (group >= 0) {
    return RunAgentGroup(server, group, o.agents, o.delay_us, o.churn_ms);
  }
  if (o.groups < 1 || o.agents < o.groups) {
    std::fprintf(stderr, "soak: need --agents >= --groups >= 1\n");
    return 2;
  }
  signal(SIGINT, OnTerm);
  signal(SIGTERM, OnTerm);
  std::error_code ec;
  const std::string self =
      std::filesystem::read_symlink("/proc/self/exe", ec).string();
  Soak soak(o, self);
  return soak.Run();
}
