// bench/fleet_load: how much fleet one tunefleet-server carries. Starts a
// real tunefleet-server process (SQLite store on, in a temp directory) and
// N agents in this process that talk to it over the real gRPC stream on
// loopback (by default one channel, so one TCP connection, each). The
// agents are FakeFleetAgents (bench/fake_fleet_agent.h): the real protocol
// (Hello, heartbeats, results) on gRPC's callback API, answering every
// request at once with a fake measurement, a few threads for all of them;
// with --real-agents they are device_agent's Agent with FakeBackend (three
// threads each), and --delay-us applies. For N = 64, 256, 1000 it runs one
// random-search GEMM job (--jobs J: J at once, on J workloads) and prints
// trials per second, the server's CPU time per trial and this process's
// (the fake agents') CPU time per trial (both from /proc/PID/stat, user +
// system). The agents and the server
// share this machine's cores: on a small box the agents' CPU is part of
// what limits trials per second, and the server's CPU per trial is the
// figure that carries over to a box where they do not share.
//
// "first s" is the time from the submissions to the first trial done as
// the job's progress shows it: its search space built and its first batch
// written and sent (agents start on the batch's first 1,024 trials). With
// --repeat R each agent count runs R times and a row of each column's
// median follows (the runs on a shared box scatter by 20% and more).
//
// Usage: fleet_load [--trials T] [--agents 64,256,1000] [--agents-per-channel
//   C] [--in-flight F] [--no-source-cache] [--no-result-batches]
//   [--jobs J] [--repeat R] [--real-agents [--delay-us D]]
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "bench/fake_fleet_agent.h"
#include "device_agent/agent.h"
#include "device_agent/backend.h"
#include "grpcpp/grpcpp.h"
#include "kernels_templates/workload.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

// utime + stime of a process, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(in, line);
  // Fields after the ")" that ends the command name; utime and stime are
  // fields 14 and 15 of the whole line (proc(5)).
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Threads of a process now (/proc/PID/status).
int Threads(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return 0;
}

struct Result {
  int agents = 0;
  uint32_t trials = 0;
  double seconds = 0;
  double server_cpu_s = 0;
  double bench_cpu_s = 0;  // this process: the fake agents and the client
  double first_s = 0;      // from the submissions to the first trial done
  int server_threads = 0;  // at the end of the job, agents still connected
};

struct FleetOptions {
  bool real_agents = false;
  int delay_us = 0;  // real agents only
  int agents_per_channel = 1;
  uint32_t in_flight = 2;     // Hello.max_in_flight of every agent
  bool source_cache = true;   // agents cache sources by hash
  bool batch_results = true;  // fake agents batch results (Welcome allows)
  int jobs = 1;               // jobs at once, each on its own workload
};

// Submits one random-search job of `trials` on the j-th GEMM workload
// (M = 1024 + 16 j) for the fake device `key` and watches it to its end;
// returns its trials done (0 when the submission fails) and sets
// `*first_done` to when the watch first showed a finished trial.
uint32_t RunJob(tunefleet::v1::TuningService::Stub& stub,
                const std::string& key, size_t j, uint32_t trials,
                Clock::time_point* first_done) {
  tunefleet::v1::SubmitJobRequest request;
  *request.mutable_workload() =
      tunefleet::trial::WorkloadToProto(*tunefleet::templates::Workload::Parse(
          "gemm", absl::StrCat("M=", 1024 + 16 * j, ",N=1024,K=1024")));
  request.set_device_key(key);
  request.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  request.set_trials(trials);
  request.set_skip_reference(true);
  request.set_no_transfer(true);
  grpc::ClientContext submit_context;
  tunefleet::v1::SubmitJobResponse submitted;
  grpc::Status s = stub.SubmitJob(&submit_context, request, &submitted);
  if (!s.ok()) {
    std::fprintf(stderr, "fleet_load: submit: %s\n", s.error_message().c_str());
    return 0;
  }
  grpc::ClientContext watch_context;
  tunefleet::v1::WatchJobRequest watch;
  watch.set_job_id(submitted.job_id());
  auto reader = stub.WatchJob(&watch_context, watch);
  tunefleet::v1::JobProgress p;
  uint32_t done = 0;
  while (reader->Read(&p)) {
    if (done == 0 && p.trials_done() > 0) *first_done = Clock::now();
    done = p.trials_done();
  }
  reader->Finish();
  return done;
}

Result RunOnce(const std::string& address, pid_t server_pid, int n,
               uint32_t trials, const FleetOptions& fleet) {
  const std::string key = absl::StrCat("fake-", n);
  const int delay_us = fleet.delay_us;
  std::unique_ptr<tunefleet::bench::FakeFleet> fakes;
  std::vector<std::unique_ptr<tunefleet::device_agent::Agent>> agents;
  std::vector<std::thread> threads;
  if (!fleet.real_agents) {
    const int per = std::max(1, fleet.agents_per_channel);
    tunefleet::bench::FakeFleetOptions options;
    options.max_in_flight = fleet.in_flight;
    if (!fleet.source_cache) options.source_cache_bytes = 0;
    options.batch_results = fleet.batch_results;
    fakes = std::make_unique<tunefleet::bench::FakeFleet>(
        address, key, n, (n + per - 1) / per, options);
  }
  for (int i = 0; fleet.real_agents && i < n; ++i) {
    tunefleet::device_agent::AgentOptions o;
    o.server = address;
    o.device_key = key;
    o.agent_name = absl::StrCat(key, "-", i);
    o.verbose = false;
    o.max_in_flight = fleet.in_flight;
    if (!fleet.source_cache) o.source_cache_bytes = 0;
    agents.push_back(std::make_unique<tunefleet::device_agent::Agent>(
        o, std::make_unique<tunefleet::device_agent::FakeBackend>(
               tunefleet::device_agent::FakeBackend::FakeDevice(
                   "bench/fleet_load"),
               delay_us)));
    threads.emplace_back([a = agents.back().get()] {
      const absl::Status ended = a->Run();
      if (!ended.ok()) {
        std::fprintf(stderr, "fleet_load: agent ended: %s\n",
                     std::string(ended.message()).c_str());
      }
    });
  }
  auto stub = tunefleet::v1::TuningService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  // Every agent connected before the clock starts.
  for (int tries = 0; tries < 600; ++tries) {
    grpc::ClientContext c;
    tunefleet::v1::ListDevicesResponse devices;
    stub->ListDevices(&c, {}, &devices);
    int connected = 0;
    for (const auto& d : devices.devices()) {
      if (d.device_key() == key) connected = d.connected_agents();
    }
    if (connected == n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double cpu0 = CpuSeconds(server_pid);
  const double bench_cpu0 = CpuSeconds(getpid());
  const auto t0 = Clock::now();
  Result r;
  r.agents = n;
  // Jobs at once, each on its own GEMM workload; the clock stops when the
  // last one ends.
  std::vector<uint32_t> done(std::max(1, fleet.jobs), 0);
  std::vector<Clock::time_point> first(done.size(), Clock::time_point::max());
  std::vector<std::thread> watchers;
  for (size_t j = 0; j < done.size(); ++j) {
    watchers.emplace_back(
        [&, j] { done[j] = RunJob(*stub, key, j, trials, &first[j]); });
  }
  for (std::thread& w : watchers) w.join();
  for (uint32_t d : done) r.trials += d;
  const auto t1 = Clock::now();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.first_s =
      std::chrono::duration<double>(
          std::min(t1, *std::min_element(first.begin(), first.end())) - t0)
          .count();
  r.server_cpu_s = CpuSeconds(server_pid) - cpu0;
  r.bench_cpu_s = CpuSeconds(getpid()) - bench_cpu0;
  r.server_threads = Threads(server_pid);
  if (fakes) fakes->Stop();
  for (auto& a : agents) a->Stop();
  for (auto& t : threads) t.join();
  return r;
}

// One printed row: a run's figures per trial and per second.
struct Row {
  int agents = 0;
  double trials = 0;
  double seconds = 0;
  double trials_per_s = 0;
  double server_us = 0;  // server CPU per trial
  double agents_us = 0;  // this process's CPU per trial
  double cpu_use = 0;    // cores busy on average (server + agents)
  double threads = 0;
  double first_s = 0;
};

Row RowOf(const Result& r) {
  const double per = r.trials ? 1e6 / r.trials : 0.0;
  return Row{r.agents,
             static_cast<double>(r.trials),
             r.seconds,
             r.trials / r.seconds,
             r.server_cpu_s * per,
             r.bench_cpu_s * per,
             (r.server_cpu_s + r.bench_cpu_s) / r.seconds,
             static_cast<double>(r.server_threads),
             r.first_s};
}

// Each column's median over `rows` (the middle one, or the mean of the
// two middle ones).
Row Median(const std::vector<Row>& rows) {
  auto median = [&rows](double Row::*column) {
    std::vector<double> v;
    v.reserve(rows.size());
    for (const Row& r : rows) v.push_back(r.*column);
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  };
  Row out;
  out.agents = rows.front().agents;
  for (double Row::*column :
       {&Row::trials, &Row::seconds, &Row::trials_per_s, &Row::server_us,
        &Row::agents_us, &Row::cpu_use, &Row::threads, &Row::first_s}) {
    out.*column = median(column);
  }
  return out;
}

void PrintRow(const std::string& label, const Row& r) {
  std::printf("%7s %8.0f %9.2f %10.1f %13.1f %13.1f %9.2f %15.0f %8.2f\n",
              label.c_str(), r.trials, r.seconds, r.trials_per_s, r.server_us,
              r.agents_us, r.cpu_use, r.threads, r.first_s);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fleet_load: trials per second and server CPU per trial for "
      "N agents with a fake measurement backend"};
  uint32_t trials = 20000;
  std::vector<int> counts = {64, 256, 1000};
  FleetOptions fleet;
  int repeat = 1;
  std::string server_binary = TUNEFLEET_SERVER_BINARY;
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--trials", trials, "trials per job");
  app.add_option("--server-binary", server_binary,
                 "the tunefleet-server to run (default: this build's)");
  app.add_flag("--real-agents", fleet.real_agents,
               "device_agent's Agent with FakeBackend instead of "
               "FakeFleetAgent");
  app.add_option("--agents-per-channel", fleet.agents_per_channel,
                 "FakeFleetAgents sharing one channel (TCP connection)");
  app.add_option("--agents", counts, "agent counts to run")->delimiter(',');
  app.add_option("--in-flight", fleet.in_flight,
                 "requests each agent holds at once (Hello.max_in_flight)");
  app.add_flag("!--no-source-cache", fleet.source_cache,
               "agents without a source cache: every request carries its "
               "kernel and reference sources");
  app.add_flag("!--no-result-batches", fleet.batch_results,
               "fake agents send one result per message");
  app.add_option("--jobs", fleet.jobs,
                 "jobs at once, each on its own GEMM workload (trials/s "
                 "counts them all)")
      ->check(CLI::Range(1, 64));
  app.add_option("--repeat", repeat,
                 "runs per agent count; with more than one, a row of each "
                 "column's median follows")
      ->check(CLI::Range(1, 100));
  app.add_option("--delay-us", fleet.delay_us,
                 "the fake backend's time per measurement (--real-agents)");
  CLI11_PARSE(app, argc, argv);

  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    absl::StrCat("tf_fleet_load_", getpid());
  std::filesystem::create_directories(dir);
  const std::string address = "127.0.0.1:47931";
  tunefleet::base::Subprocess::Options spawn;
  spawn.output_path = (dir / "server.log").string();
  // Loopback development mode: the agents and the client send no token.
  absl::StatusOr<tunefleet::base::Subprocess> server_process =
      tunefleet::base::Subprocess::Spawn(
          {server_binary, "--listen", address, "--db",
           (dir / "load.db").string(), "--no-auth"},
          spawn);
  if (!server_process.ok()) {
    std::fprintf(stderr, "fleet_load: %s\n",
                 std::string(server_process.status().message()).c_str());
    return 1;
  }
  const pid_t server = server_process->pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  cpu_set_t affinity;
  const int cores = sched_getaffinity(0, sizeof(affinity), &affinity) == 0
                        ? CPU_COUNT(&affinity)
                        : 0;
  std::printf(
      "fleet_load: tunefleet-server pid %d, SQLite store in %s, "
      "%u trials per job, %d job(s) at once, %s, in flight %u, source "
      "cache %s, result "
      "batches %s, fake backend delay %d us, %d cores available (shared by "
      "the server and the fake agents)\n",
      server, dir.c_str(), trials, fleet.jobs,
      fleet.real_agents ? "device_agent Agents" : "FakeFleetAgents",
      fleet.in_flight, fleet.source_cache ? "on" : "off",
      fleet.batch_results && !fleet.real_agents ? "on" : "off", fleet.delay_us,
      cores);
  std::printf("%7s %8s %9s %10s %13s %13s %9s %15s %8s\n", "agents", "trials",
              "wall s", "trials/s", "server us/tr", "agents us/tr", "CPU use",
              "server threads", "first s");
  for (int n : counts) {
    std::vector<Row> rows;
    for (int i = 0; i < repeat; ++i) {
      rows.push_back(RowOf(RunOnce(address, server, n, trials, fleet)));
      PrintRow(std::to_string(n), rows.back());
    }
    if (repeat > 1) PrintRow("median", Median(rows));
  }
  (void)server_process->Signal(SIGTERM);
  (void)server_process->Wait();
  if (std::getenv("TUNEFLEET_KEEP_BENCH_DIR") == nullptr) {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
