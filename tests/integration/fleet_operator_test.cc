// What an operator hits running tunefleet for real (issue 37), with real
// processes: tunefleet-server, tunefleet-agent and the tunefleet CLI on
// loopback, a real SQLite file.
// - One owner per database: a second tunefleet-server (or an embedded
//   `tunefleet tune`) on a database a server serves is refused before it
//   listens, naming the owner's pid and address, while the read-only
//   commands work beside it; the first server's job ends with every trial
//   measured once; after a SIGKILL the next server takes the database.
// - One listener per port: a second --http (server or dashboard) or --listen
//   on a port in use exits non-zero with the same message and leaves no file.
// - One truth across restarts: a cancelled job's counts, state, errors and
//   search space read the same from the live server, after a SIGKILL and a
//   restart, from `jobs --db` and in `report`; its cancelled trials are no
//   errors and no points of the report.
// - One JSON vocabulary: `jobs --json`, `watch --json` (of a server and of
//   its database file) and the HTTP API's
//   /api/jobs/ID print the same object for the same job; with --json an
//   error is a JSON object on stderr.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/http_get.h"
#include "tests/support/process.h"
#include "tests/support/stored_trials.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tunefleet::v1::JobProgress;

std::string ServerBinary() { return BinaryDir() + "/server/tunefleet-server"; }

// A command that may wrongly keep running (a listener that should have been
// refused): killed after 20 s, which exits 124.
testing::CommandResult RunBounded(const std::string& command) {
  return RunCommand("timeout -s KILL 20 " + command);
}

// The files in `dir` whose names start with `prefix`.
std::vector<std::string> FilesStartingWith(const std::string& dir,
                                           const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

nlohmann::json ParseJson(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Every trial of the job has exactly one stored result, none of them
// cancelled, and no config was tried twice.
void ExpectMeasuredOnce(const std::vector<store::Trial>& rows, size_t budget) {
  std::set<uint64_t> configs;
  size_t measured = 0;
  for (const store::Trial& t : rows) {
    EXPECT_TRUE(configs.insert(t.config_index).second)
        << "config " << t.config_index << " tried twice";
    if (t.state == tunefleet::v1::TRIAL_STATE_DONE &&
        t.error != tunefleet::v1::Measurement::CANCELLED) {
      ++measured;
    }
  }
  EXPECT_EQ(measured, budget);
  EXPECT_EQ(rows.size(), budget);
}

TEST(Operator, ASecondServerOnADatabaseInUseIsRefusedAndReadersWorkBesideIt) {
  FleetHarness fleet("owner");
  ASSERT_TRUE(fleet.StartFleet(1, "owner"))
      << testing::ReadAll(fleet.dir() + "/server.log");
  constexpr uint32_t kTrials = 12;
  const int64_t job =
      fleet.Submit(testing::SmallGemmJob("owner", kTrials, 150, 3));
  ASSERT_GT(job, 0);
  const std::string owner =
      absl::StrCat("is owned by tunefleet-server (pid ", fleet.server().pid(),
                   ") on ", fleet.address());

  // A second server on another port: refused before it listens.
  const int other_port = FreePort();
  auto second = RunBounded(
      absl::StrCat(ServerBinary(), " --no-auth --listen 127.0.0.1:", other_port,
                   " --db ", fleet.db_path()));
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_THAT(second.err, HasSubstr(owner));
  EXPECT_THAT(second.err, Not(HasSubstr("listening")));
  EXPECT_THAT(second.err, Not(HasSubstr("resumed")));
  // An embedded `tune` on the same file is a writer too.
  auto embedded = RunBounded(absl::StrCat(
      CliBinary(), " tune --op gemm --shape M=8,N=8,K=8 --trials 1 --db ",
      fleet.db_path()));
  EXPECT_NE(embedded.exit_code, 0);
  EXPECT_THAT(embedded.err, HasSubstr(owner));

  // The read-only commands work beside the owner.
  const std::string db = " --db " + fleet.db_path();
  auto jobs = RunBounded(CliBinary() + " jobs" + db + " --json");
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, HasSubstr(absl::StrCat("\"job_id\": ", job)));
  auto query = RunBounded(CliBinary() + " query --all" + db);
  EXPECT_EQ(query.exit_code, 0) << query.err;
  auto report = RunBounded(CliBinary() + " report" + db + " --out " +
                           fleet.dir() + "/report.html");
  EXPECT_EQ(report.exit_code, 0) << report.err;
  auto backup = RunBounded(CliBinary() + " backup" + db + " --out " +
                           fleet.dir() + "/backup.db");
  EXPECT_EQ(backup.exit_code, 0) << backup.err;
  const int dashboard_port = FreePort();
  testing::Process dashboard(
      {CliBinary(), "dashboard", "--db", fleet.db_path(), "--http",
       absl::StrCat("127.0.0.1:", dashboard_port)},
      fleet.dir() + "/dashboard.log");
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto res = HttpGet(dashboard_port, "/api/jobs", "");
        return res && res->status == 200;
      },
      std::chrono::seconds(20)))
      << testing::ReadAll(fleet.dir() + "/dashboard.log");
  dashboard.Kill(SIGTERM);

  // The owner's job ends with every trial measured once.
  auto last = fleet.AwaitEnd(job, kFleetJobLimit);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->state(), tunefleet::v1::JOB_STATE_DONE) << last->message();
  EXPECT_EQ(last->trials_done(), kTrials);

  // Killed without a chance to clean up, the owner leaves its lock file,
  // but no lock: the next server takes the database.
  fleet.server().Kill(SIGKILL);
  ASSERT_TRUE(fleet.StartServer())
      << testing::ReadAll(fleet.dir() + "/server.log");
  fleet.server().Kill(SIGTERM);
  ExpectMeasuredOnce(testing::StoredTrials(fleet.db_path(), job), kTrials);
}

TEST(Operator, AListenerOnAPortInUseIsRefusedAndLeavesNoFile) {
  FleetHarness fleet("ports");
  const int http_port = FreePort();
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}))
      << testing::ReadAll(fleet.dir() + "/server.log");
  const std::string in_use = "the port is in use";

  // A second server's --http on the dashboard's port.
  auto http = RunBounded(absl::StrCat(
      ServerBinary(), " --no-auth --listen 127.0.0.1:", FreePort(), " --db ",
      fleet.dir(), "/second.db --http 127.0.0.1:", http_port));
  EXPECT_EQ(http.exit_code, 1) << http.err;
  EXPECT_THAT(http.err,
              HasSubstr(absl::StrCat("cannot listen on 127.0.0.1:", http_port,
                                     " (--http): ", in_use)));
  EXPECT_THAT(FilesStartingWith(fleet.dir(), "second.db"),
              ::testing::IsEmpty());

  // A second server's --listen on the gRPC port: the same message.
  auto grpc = RunBounded(absl::StrCat(ServerBinary(), " --no-auth --listen ",
                                      fleet.address(), " --db ", fleet.dir(),
                                      "/third.db"));
  EXPECT_EQ(grpc.exit_code, 1) << grpc.err;
  EXPECT_THAT(grpc.err,
              HasSubstr(absl::StrCat("cannot listen on ", fleet.address(),
                                     " (--listen): ", in_use)));
  EXPECT_THAT(FilesStartingWith(fleet.dir(), "third.db"), ::testing::IsEmpty());

  // `tunefleet dashboard` on the dashboard's port.
  auto dashboard =
      RunBounded(absl::StrCat(CliBinary(), " dashboard --db ", fleet.db_path(),
                              " --http 127.0.0.1:", http_port));
  EXPECT_NE(dashboard.exit_code, 0);
  EXPECT_NE(dashboard.exit_code, 124) << "it served beside the server";
  EXPECT_THAT(dashboard.err, HasSubstr(in_use));

  // The first server still answers on both ports, alone.
  EXPECT_TRUE(fleet.Devices().has_value());
  auto res = HttpGet(http_port, "/api/jobs", fleet.reader_token());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// The fields that say how far a job got.
struct Counts {
  std::string state;
  uint64_t done = 0, total = 0, space = 0;
  std::map<std::string, uint64_t> errors;
  bool operator==(const Counts&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Counts& c) {
  os << c.state << " " << c.done << "/" << c.total << " space " << c.space;
  for (const auto& [code, n] : c.errors) os << " " << code << "=" << n;
  return os;
}
Counts CountsOf(const JobProgress& p) {
  Counts c{tunefleet::v1::JobState_Name(p.state()), p.trials_done(),
           p.trials_total(), p.space_size()};
  for (const auto& [code, n] : p.errors()) c.errors[code] = n;
  return c;
}
// A count of `j` (a JSON number), or ~0 where it is missing or no number
// (so that the comparison fails and prints it).
uint64_t Number(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name) || !j[name].is_number_unsigned()) {
    ADD_FAILURE() << name << " is no count in " << j.dump();
    return ~uint64_t{0};
  }
  return j[name].get<uint64_t>();
}
Counts CountsOf(const nlohmann::json& j) {
  Counts c;
  if (!j.is_object()) {
    ADD_FAILURE() << "no job object: " << j.dump();
    return c;
  }
  c.state = j.value("state", "");
  c.done = Number(j, "trials_done");
  c.total = Number(j, "trials_total");
  c.space = Number(j, "space_size");
  // A copy: the range of a range-for must outlive the loop.
  const nlohmann::json errors = j.value("errors", nlohmann::json::object());
  for (const auto& [code, n] : errors.items()) {
    c.errors[code] = n.is_number_unsigned() ? n.get<uint64_t>() : ~0ull;
  }
  return c;
}

// The data `tunefleet report` embedded in its page.
nlohmann::json ReportData(const std::string& html) {
  const std::string mark = "window.TUNEFLEET_REPORT = ";
  const size_t at = html.find(mark);
  if (at == std::string::npos) return nullptr;
  const size_t end = html.find(";\n</script>", at);
  return ParseJson(html.substr(at + mark.size(), end - at - mark.size()));
}

TEST(Operator, ACancelledJobCountsTheSameLiveAfterARestartAndInTheReport) {
  FleetHarness fleet("cancel");
  const int http_port = FreePort();
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}));
  fleet.StartAgent(0, "cancel", /*max_in_flight=*/3);
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet.Connected("cancel") == 1; },
                            std::chrono::seconds(60)));
  const int64_t job = fleet.Submit(testing::SmallGemmJob("cancel", 20, 400, 5));
  ASSERT_GT(job, 0);
  ASSERT_TRUE(fleet.AwaitTrialsDone(job, 2, kFleetJobLimit));
  ASSERT_TRUE(fleet.Cancel(job).ok());
  auto ended = fleet.AwaitEnd(job, kFleetJobLimit);
  ASSERT_TRUE(ended.has_value());
  ASSERT_EQ(ended->state(), tunefleet::v1::JOB_STATE_CANCELLED);
  // Give trials still in flight at the cancel their chance to land.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const Counts live = CountsOf(*fleet.Job(job));
  EXPECT_LT(live.done, 20u) << live;
  EXPECT_GT(live.space, 0u) << live;
  EXPECT_EQ(live.errors.count("CANCELLED"), 0u) << live;
  auto api =
      HttpGet(http_port, absl::StrCat("/api/jobs/", job), fleet.reader_token());
  ASSERT_TRUE(api);
  EXPECT_EQ(CountsOf(ParseJson(api->body)["job"]), live);

  // The database holds trials the cancel left unmeasured.
  size_t cancelled_rows = 0;
  for (const store::Trial& t : testing::StoredTrials(fleet.db_path(), job)) {
    cancelled_rows += t.error == tunefleet::v1::Measurement::CANCELLED;
  }
  std::printf("[operator] live %s; %zu trials stored as CANCELLED\n",
              ::testing::PrintToString(live).c_str(), cancelled_rows);

  fleet.server().Kill(SIGKILL);
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}));
  EXPECT_EQ(CountsOf(*fleet.Job(job)), live) << "after a restart";
  api =
      HttpGet(http_port, absl::StrCat("/api/jobs/", job), fleet.reader_token());
  ASSERT_TRUE(api);
  EXPECT_EQ(CountsOf(ParseJson(api->body)["job"]), live)
      << "the API, restarted";
  fleet.server().Kill(SIGTERM);

  auto jobs = RunCommand(CliBinary() + " jobs --json --db " + fleet.db_path());
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  const nlohmann::json list = ParseJson(jobs.out);
  ASSERT_TRUE(list.is_array()) << jobs.out;
  bool found = false;
  for (const nlohmann::json& j : list) {
    if (j.value("job_id", int64_t{0}) != job) continue;
    found = true;
    EXPECT_EQ(CountsOf(j), live) << "jobs --db";
  }
  EXPECT_TRUE(found) << jobs.out;

  const std::string html = fleet.dir() + "/report.html";
  auto report =
      RunCommand(absl::StrCat(CliBinary(), " report --db ", fleet.db_path(),
                              " --job ", job, " --out ", html));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const nlohmann::json data = ReportData(testing::ReadAll(html));
  ASSERT_TRUE(data.is_object()) << "no data in the report";
  ASSERT_FALSE(data["details"].empty()) << data.dump().substr(0, 300);
  const nlohmann::json& detail = data["details"][0];
  EXPECT_EQ(CountsOf(detail["job"]), live) << "report";
  // Its points are measurements: none of the cancelled trials.
  EXPECT_EQ(detail["trials"].size(), live.done);
  for (const nlohmann::json& t : detail["trials"]) {
    EXPECT_NE(t.value("error", ""), "CANCELLED") << t.dump();
  }
}

TEST(Operator, TheCliAndTheHttpApiPrintTheSameJobJson) {
  FleetHarness fleet("json");
  const int http_port = FreePort();
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}));
  fleet.StartAgent(0, "json");
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return fleet.Connected("json") == 1; }, std::chrono::seconds(60)));
  const int64_t job = fleet.Submit(testing::SmallGemmJob("json", 4, 0, 9));
  ASSERT_GT(job, 0);
  ASSERT_TRUE(fleet.AwaitEnd(job, kFleetJobLimit).has_value());

  const std::string server = absl::StrCat(" --server ", fleet.address(),
                                          " --token ", fleet.reader_token());
  auto jobs = RunCommand(CliBinary() + " jobs --json" + server);
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  nlohmann::json from_list;
  for (const nlohmann::json& j : ParseJson(jobs.out)) {
    if (j.value("job_id", int64_t{0}) == job) from_list = j;
  }
  ASSERT_TRUE(from_list.is_object()) << jobs.out;
  auto watch =
      RunCommand(absl::StrCat(CliBinary(), " watch ", job, " --json", server));
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  const nlohmann::json from_watch = ParseJson(watch.out);
  // The same job watched in the database file the server writes to.
  auto watch_db = RunCommand(absl::StrCat(CliBinary(), " watch ", job,
                                          " --json --db ", fleet.db_path()));
  ASSERT_EQ(watch_db.exit_code, 0) << watch_db.err;
  const nlohmann::json from_db = ParseJson(watch_db.out);
  auto api =
      HttpGet(http_port, absl::StrCat("/api/jobs/", job), fleet.reader_token());
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200);
  const nlohmann::json from_api = ParseJson(api->body)["job"];

  // The same names, the same values: ids and counts as numbers, enums as
  // the contract spells them.
  EXPECT_EQ(from_list, from_api);
  EXPECT_EQ(from_watch, from_api);
  EXPECT_EQ(from_db, from_api);
  EXPECT_TRUE(from_api["job_id"].is_number_integer()) << from_api.dump();
  EXPECT_EQ(from_api["job_id"], job);
  EXPECT_EQ(from_api["state"], "JOB_STATE_DONE");
  EXPECT_EQ(from_api["strategy"], "STRATEGY_RANDOM");
  EXPECT_EQ(from_api["trials_done"], 4);
  ASSERT_TRUE(from_api["best"].is_object());
  EXPECT_TRUE(from_api["best"]["trial_id"].is_number_integer());
  EXPECT_TRUE(from_api["created_unix_ms"].is_number_integer());

  // `devices --json`: numbers as numbers, the contract's names.
  auto devices = RunCommand(CliBinary() + " devices --json" + server);
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  const nlohmann::json list = ParseJson(devices.out);
  ASSERT_EQ(list.size(), 1u) << devices.out;
  EXPECT_EQ(list[0]["device_key"], "json");
  EXPECT_EQ(list[0]["connected_agents"], 1);
  EXPECT_TRUE(list[0]["device"]["global_mem_bytes"].is_number_integer());
  EXPECT_TRUE(list[0]["device"]["max_work_group_size"].is_number_integer());

  // With --json an error is a JSON object on stderr, with a non-zero exit.
  auto missing =
      RunCommand(absl::StrCat(CliBinary(), " watch 999999 --json", server));
  EXPECT_NE(missing.exit_code, 0);
  const nlohmann::json error = ParseJson(missing.err);
  ASSERT_TRUE(error.is_object()) << missing.err;
  EXPECT_EQ(error["code"], "NOT_FOUND");
  EXPECT_THAT(error.value("error", ""), HasSubstr("999999"));
  auto refused = RunCommand(CliBinary() + " jobs --json --db " + fleet.dir() +
                            "/missing.db");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(ParseJson(refused.err)["code"], "NOT_FOUND") << refused.err;
  auto bad_flag = RunCommand(CliBinary() + " jobs --json --limit 0 --db x.db");
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_EQ(ParseJson(bad_flag.err)["code"], "INVALID_ARGUMENT")
      << bad_flag.err;
}

}  // namespace
}  // namespace tunefleet::testing
