// The tunefleet binary when things go wrong, against real processes: a
// --server without a port, a port where nothing listens, TLS on one side
// only, missing or weak tokens, a server SIGKILLed mid-job, a cancel while
// trials are in flight, Ctrl-C, a job waiting for an agent; and what it
// prints when they go right: tables with a long device key, every page of
// a list, --version and the strategies in --help. tunefleet-server and
// tunefleet-agent run as processes on loopback; the agent measures on the
// first OpenCL device (PoCL in CI).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/tokens.h"
#include "base/version.h"
#include "contract/names.h"
#include "contract/timing_policy.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"

namespace tunefleet::testing {
namespace {

constexpr auto kLimit = std::chrono::seconds(180);

// A fresh directory for one test, removed with the object.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(absl::StrCat(::testing::TempDir(), "/cli_errors_", name, "_",
                           getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using Command = ::tunefleet::testing::CliCommand;

// The job id a `tune` command printed on stderr ("tunefleet tune: job 7,
// ..."), once it has.
std::optional<int64_t> SubmittedJob(const Command& tune) {
  static const std::regex kJob("tunefleet tune: job ([0-9]+),");
  std::smatch m;
  const std::string err = tune.err();
  if (!std::regex_search(err, m, kJob)) return std::nullopt;
  int64_t id = 0;
  if (!absl::SimpleAtoi(m[1].str(), &id)) return std::nullopt;
  return id;
}

// The column where `cell` starts in `line`.
size_t ColumnOf(const std::string& line, const std::string& cell) {
  const size_t at = line.find(cell);
  EXPECT_NE(at, std::string::npos) << "'" << cell << "' not in: " << line;
  return at;
}

// ---------------------------------------------------------------------------
// Addresses and transports, no agent needed.

TEST(CliErrors, AServerWithoutAPortIsRefusedByEveryCommand) {
  TempDir dir("no_port");
  const std::string db = dir.path() + "/t.db";
  for (const std::string& command :
       {"tune --shape M=8,N=8,K=8 --db " + db, std::string("jobs"),
        std::string("watch 1"), std::string("cancel 1"), std::string("query"),
        std::string("devices")}) {
    auto r = RunCommand(CliBinary() + " " + command + " --server 127.0.0.1");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_NE(r.err.find("--server '127.0.0.1'"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
  }
  auto r = RunCommand(CliBinary() + " jobs --server http://127.0.0.1:7878");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(CliErrors, NothingListeningSaysNoServerAnswered) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  for (const std::string& command :
       {std::string("devices"), std::string("jobs"), std::string("query"),
        std::string("watch 3"), std::string("tune --shape M=8,N=8,K=8")}) {
    auto r = RunCommand(CliBinary() + " " + command + " --server " + address);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("no tunefleet-server answered at " + address +
                         ": is it running?"),
              std::string::npos)
        << command << ": " << r.err;
    EXPECT_NE(r.err.find("tunefleet-server --listen"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("failed to connect to all addresses"),
              std::string::npos)
        << "raw gRPC text: " << r.err;
  }
}

// A tunefleet-server process without authentication (loopback), with TLS
// when `certs` names a deploy/make-certs.sh directory.
class ServerProcess {
 public:
  ServerProcess(const std::string& dir, const std::string& certs)
      : address_(absl::StrCat("127.0.0.1:", FreePort())) {
    std::vector<std::string> argv = {BinaryDir() + "/server/tunefleet-server",
                                     "--listen",
                                     address_,
                                     "--db",
                                     dir + "/server.db",
                                     "--no-auth"};
    if (!certs.empty()) {
      argv.insert(argv.end(), {"--tls-cert", certs + "/server.pem", "--tls-key",
                               certs + "/server.key"});
    }
    process_ = std::make_unique<testing::Process>(argv, dir + "/server.log");
    const std::string ca = certs.empty() ? "" : " --ca " + certs + "/ca.pem";
    ready_ = FleetHarness::WaitFor(
        [&] {
          return RunCommand(CliBinary() + " devices --server " + address_ + ca)
                     .exit_code == 0;
        },
        std::chrono::seconds(60));
  }
  const std::string& address() const { return address_; }
  bool ready() const { return ready_; }

 private:
  std::string address_;
  std::unique_ptr<testing::Process> process_;
  bool ready_ = false;
};

TEST(CliErrors, PlaintextClientAgainstATlsServerIsToldToPassCa) {
  TempDir dir("tls_server");
  const std::string certs = MakeCerts(dir.path() + "/certs");
  ServerProcess server(dir.path(), certs);
  ASSERT_TRUE(server.ready()) << ReadAll(dir.path() + "/server.log");
  for (const std::string& command :
       {std::string("devices"), std::string("jobs"), std::string("query")}) {
    auto r = RunCommand(CliBinary() + " " + command + " --server " +
                        server.address());
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("seems to use TLS; pass --ca"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_EQ(r.err.find("Socket closed"), std::string::npos) << r.err;
  }
}

TEST(CliErrors, TlsClientAgainstAPlaintextServerIsToldToLeaveOutCa) {
  TempDir dir("plain_server");
  const std::string certs = MakeCerts(dir.path() + "/certs");
  ServerProcess server(dir.path(), "");
  ASSERT_TRUE(server.ready()) << ReadAll(dir.path() + "/server.log");
  auto r = RunCommand(CliBinary() + " devices --server " + server.address() +
                      " --ca " + certs + "/ca.pem");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("does not speak TLS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("leave out --ca"), std::string::npos) << r.err;
}

TEST(CliErrors, MissingOrWeakTokensGetTheTokenAdvice) {
  FleetHarness fleet("cli_tokens");
  const std::string reader = fleet.AddTokenFile(auth::Role::kReader, "reader");
  ASSERT_TRUE(fleet.StartServer());
  auto r = RunCommand(CliBinary() + " jobs --server " + fleet.address());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no access token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--token-file"), std::string::npos) << r.err;
  r = RunCommand(CliBinary() + " cancel 1 --server " + fleet.address() +
                 " --token-file " + reader);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("needs a token of role tuner"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tunefleet token add --role tuner"), std::string::npos)
      << r.err;
}

// ---------------------------------------------------------------------------
// A server and an agent of a long device key, as processes.

const char kLongKey[] =
    "pocl-pthread-cpu-with-a-device-key-longer-than-any-table-column-0123";

// A tune command's flags for a long job: a big budget, slow trials.
std::string LongTune(const FleetHarness& fleet, const std::string& token) {
  return absl::StrCat("tune --server ", fleet.address(), " --token-file ",
                      token, " --device-key ", kLongKey,
                      " --shape M=256,N=256,K=256 --trials 2000 "
                      "--strategy random --min-repeat-ms 20 --no-transfer");
}

// Starts the fleet's server and one agent of kLongKey; false unless the
// agent connected within a minute.
bool StartFleet(FleetHarness& fleet) {
  if (!fleet.StartServer()) return false;
  fleet.StartAgent(0, kLongKey, 2);
  return FleetHarness::WaitFor([&] { return fleet.Connected(kLongKey) == 1; },
                               std::chrono::seconds(60));
}

// Waits until `tune` printed its job id and the server counts a finished
// trial of it; the id, or 0.
int64_t AwaitProgress(const FleetHarness& fleet, const Command& tune) {
  int64_t job = 0;
  FleetHarness::WaitFor(
      [&] {
        if (job == 0) job = SubmittedJob(tune).value_or(0);
        if (job == 0) return false;
        auto p = fleet.Job(job);
        return p && p->trials_done() >= 1;
      },
      kLimit);
  return job;
}

// A long tune (LongTune, a tuner's token, in a TempDir `name`) on a fleet
// "cli_<name>" of the server and one agent of kLongKey.
struct LongTuneRun {
  explicit LongTuneRun(const std::string& name)
      : fleet("cli_" + name),
        tuner(fleet.AddTokenFile(auth::Role::kTuner, "tuner")),
        dir(name) {}

  // Starts the fleet and the tune, and waits until a trial of its job
  // finished; fails the test otherwise.
  void Start() {
    ASSERT_TRUE(StartFleet(fleet));
    tune = std::make_unique<Command>(LongTune(fleet, tuner), dir.path());
    job = AwaitProgress(fleet, *tune);
    ASSERT_GT(job, 0) << tune->err();
  }

  FleetHarness fleet;
  const std::string tuner;
  TempDir dir;
  std::unique_ptr<Command> tune;
  int64_t job = 0;
};

TEST(CliFleet, ServerKilledMidJobSaysTheConnectionWasLostAndHowToFollow) {
  LongTuneRun run("kill");
  ASSERT_NO_FATAL_FAILURE(run.Start());
  const int64_t job = run.job;
  run.fleet.server().Kill(SIGKILL);
  const std::optional<int> exit = run.tune->Wait(std::chrono::seconds(120));
  ASSERT_TRUE(exit.has_value()) << "tune still runs: " << run.tune->err();
  EXPECT_NE(*exit, 0) << run.tune->err();
  const std::string err = run.tune->err();
  EXPECT_NE(err.find(absl::StrCat("lost the connection to tunefleet-server at ",
                                  run.fleet.address(), " during job ", job)),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("The server keeps the job"), std::string::npos) << err;
  EXPECT_NE(err.find(absl::StrCat("`tunefleet watch ", job, " --server ",
                                  run.fleet.address(), "`")),
            std::string::npos)
      << err;
  // No summary that looks like a normal end.
  EXPECT_EQ(run.tune->out(), "");
}

TEST(CliFleet, CancelGivesOneCountAndNamesTheTrialsInFlight) {
  LongTuneRun run("cancel");
  ASSERT_NO_FATAL_FAILURE(run.Start());
  const int64_t job = run.job;
  auto r = RunCommand(absl::StrCat(CliBinary(), " cancel ", job, " --server ",
                                   run.fleet.address(), " --token-file ",
                                   run.tuner));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kCancelled(
      "cancelled job ([0-9]+): ([0-9]+) of 2000 trials done"
      "(; ([0-9]+) in flight \\(trials? ([0-9, ]+)\\) (ends|end) unmeasured "
      "\\(CANCELLED\\))?\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, kCancelled)) << r.out;
  EXPECT_EQ(m[1].str(), absl::StrCat(job));
  const int done = std::stoi(m[2].str());
  const int in_flight = m[4].matched ? std::stoi(m[4].str()) : 0;
  if (in_flight > 0) {
    const std::vector<std::string> ids = absl::StrSplit(m[5].str(), ", ");
    EXPECT_EQ(ids.size(), static_cast<size_t>(in_flight)) << r.out;
  }
  EXPECT_GE(done, 1);

  // The tune command ends with the job, cancelled: not a success.
  const std::optional<int> exit = run.tune->Wait(std::chrono::seconds(120));
  ASSERT_TRUE(exit.has_value()) << run.tune->err();
  EXPECT_EQ(*exit, 1) << run.tune->err();
  EXPECT_NE(run.tune->out().find(absl::StrCat("cancelled job ", job, ": ")),
            std::string::npos)
      << run.tune->out();

  // Once the agent has answered, the count is at most the one printed plus
  // the trials named in flight.
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto p = run.fleet.Job(job);
        return p && p->in_flight_trial_ids_size() == 0;
      },
      kLimit));
  r = RunCommand(absl::StrCat(CliBinary(), " jobs --json --server ",
                              run.fleet.address(), " --token-file ",
                              run.tuner));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json jobs = nlohmann::json::parse(r.out);
  ASSERT_EQ(jobs.size(), 1u) << r.out;
  EXPECT_EQ(jobs[0]["state"], "JOB_STATE_CANCELLED");
  EXPECT_GE(jobs[0]["trials_done"].get<int>(), done);
  EXPECT_LE(jobs[0]["trials_done"].get<int>(), done + in_flight) << r.out;
}

TEST(CliFleet, WaitingTablesPagesAndTheSummaryOfASmallSpace) {
  FleetHarness fleet("cli_lists");
  const std::string tuner = fleet.AddTokenFile(auth::Role::kTuner, "tuner");
  ASSERT_TRUE(StartFleet(fleet));
  const std::string server =
      " --server " + fleet.address() + " --token-file " + tuner;

  // A space of 16 configs and a budget of 30: the summary says why it
  // ended early; a tuned kernel slower than the naive one is not "faster".
  auto r = RunCommand(absl::StrCat(
      CliBinary(), " tune", server, " --device-key ", kLongKey, " --template ",
      SourceDir(), "/tests/data/templates/saxpy.toml --shape N=4096 ",
      "--trials 30 --strategy grid --repeat 1 --min-repeat-ms 0"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search space has 16 configs; all measured before the "
                       "30-trial budget"),
            std::string::npos)
      << r.out;
  // Never "tuned is 0.6x faster".
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("tuned kernel is ([1-9][0-9]*\\.[0-9]x (faster|slower) "
                        "than|as fast as) the naive reference")))
      << r.out;
  r = RunCommand(absl::StrCat(CliBinary(), " tune", server, " --device-key ",
                              kLongKey,
                              " --shape M=16,N=16,K=16 --trials 3 "
                              "--strategy random --no-transfer"));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Without an agent of its key a job waits, and says why once.
  fleet.agent(0).Kill(SIGKILL);
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return fleet.Connected(kLongKey) == 0; }, kLimit));
  r = RunCommand(
      absl::StrCat(CliBinary(), " tune", server, " --device-key ", kLongKey,
                   " --shape M=8,N=8,K=8 --trials 3 --deadline-s 3"));
  const std::string waits = absl::StrCat("waits: no agent of device key '",
                                         kLongKey, "' is connected");
  const size_t first = r.err.find(waits);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(waits, first + 1), std::string::npos)
      << "shown more than once: " << r.err;

  // Tables: every row's columns start where the header's do (--wide: the
  // long key in full; without it the key is cut to fit, see cli_test).
  r = RunCommand(CliBinary() + " jobs --wide" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;
  const std::regex strategy("(grid|random|xgb)  .*");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(ColumnOf(lines[i], kLongKey), ColumnOf(lines[0], "DEVICE KEY"))
        << r.out;
    const size_t column = ColumnOf(lines[0], "STRAT");
    EXPECT_EQ(lines[i][column - 1], ' ') << r.out;
    EXPECT_TRUE(std::regex_match(lines[i].substr(column), strategy)) << r.out;
  }
  r = RunCommand(CliBinary() + " query --all --wide" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u) << r.out;
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(ColumnOf(lines[i], kLongKey), 0u);
    const size_t config = ColumnOf(lines[0], "CONFIG");
    EXPECT_NE(lines[i][config], ' ') << r.out;
    EXPECT_EQ(lines[i].substr(config - 2, 2), "  ") << r.out;
  }

  // Every page: a page of one record or job at a time lists them all.
  r = RunCommand(CliBinary() + " query --all --json" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_GE(all.size(), 19u);  // 16 + 3 trials
  r = RunCommand(CliBinary() + " query --all --json --page-size 1" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json paged = nlohmann::json::parse(r.out);
  EXPECT_EQ(paged, all);
  // The records' new fields.
  EXPECT_FALSE(all[0]["agent_name"].get<std::string>().empty()) << all[0];
  EXPECT_GT(all[0]["measured_unix_ms"].get<int64_t>(), 0) << all[0];
  r = RunCommand(CliBinary() + " jobs --json --page-size 1" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 3u) << r.out;
  r = RunCommand(CliBinary() + " jobs --json --page-size 1 --limit 2" + server);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 2u) << r.out;
}

// ---------------------------------------------------------------------------
// The embedded default and the binary's own flags.

TEST(CliEmbedded, CtrlCCancelsTheJobWithOneCount) {
  TempDir dir("ctrl_c");
  const std::string db = dir.path() + "/t.db";
  Command tune("tune --db " + db +
                   " --shape M=256,N=256,K=256 --trials 2000 --strategy "
                   "random --min-repeat-ms 20 --no-transfer",
               dir.path());
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return tune.err().find("\n[") != std::string::npos; }, kLimit))
      << tune.err();
  tune.Signal(SIGINT);
  const std::optional<int> exit = tune.Wait(std::chrono::seconds(120));
  ASSERT_TRUE(exit.has_value()) << tune.err();
  EXPECT_EQ(*exit, 130) << tune.err();
  EXPECT_NE(tune.err().find("cancelling job 1 "), std::string::npos)
      << tune.err();
  EXPECT_NE(tune.err().find("press Ctrl-C again"), std::string::npos);
  static const std::regex kCancelled(
      "\n  cancelled job 1: ([0-9]+) of 2000 trials done(; ([0-9]+) in "
      "flight)?");
  std::smatch m;
  const std::string out = tune.out();
  ASSERT_TRUE(std::regex_search(out, m, kCancelled)) << out;
  const int done = std::stoi(m[1].str());
  const int in_flight = m[3].matched ? std::stoi(m[3].str()) : 0;
  auto r = RunCommand(CliBinary() + " jobs --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json jobs = nlohmann::json::parse(r.out);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["state"], "JOB_STATE_CANCELLED");
  EXPECT_GE(jobs[0]["trials_done"].get<int>(), done);
  EXPECT_LE(jobs[0]["trials_done"].get<int>(), done + in_flight) << out;
}

TEST(CliHelp, VersionAndEveryStrategyAndTheDefaultTrialDeadline) {
  auto r = RunCommand(CliBinary() + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat("tunefleet ", base::kVersion, "\n"));
  r = RunCommand(CliBinary() + " tune --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string names;
  for (const std::string& name : contract::StrategyNames()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", name);
  }
  EXPECT_EQ(names, "grid, random, sa, ga, xgb");
  EXPECT_NE(r.out.find("search strategy: " + names), std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(absl::StrCat(
          "default, ", contract::DefaultTimingPolicy().timeout_ms(), ")")),
      std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tunefleet::testing
