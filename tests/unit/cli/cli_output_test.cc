// What the CLI prints: tables sized to their content, the summary's words,
// the cancel count, the waiting reason once per change, a model's task
// lines, snake_case JSON, the --server check, and gRPC's transport errors
// turned into advice (with the messages gRPC 1.51 gives; the real servers
// are in tests/integration/cli_errors_test.cc).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "cli/jobs_command.h"
#include "cli/model_command.h"
#include "cli/progress.h"
#include "cli/query_command.h"
#include "cli/table_text.h"
#include "client/channel.h"
#include "client/rpc_error.h"
#include "contract/json.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "nlohmann/json.hpp"
#include "tests/support/text_output.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet {
namespace {

using testing::Count;
using tunefleet::v1::JobProgress;

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// Where `cell` starts in `line`.
size_t Column(const std::string& line, const std::string& cell) {
  const size_t at = line.find(cell);
  EXPECT_NE(at, std::string::npos) << "'" << cell << "' not in: " << line;
  return at;
}

const char kLongKey[] =
    "pthread-skylake-avx512-amd-epyc-7b13-64-core-processor-pocl-3.1-debian";

JobProgress Job(int64_t id, const std::string& device_key) {
  JobProgress p;
  p.set_job_id(id);
  p.set_state(tunefleet::v1::JOB_STATE_RUNNING);
  p.set_trials_done(3);
  p.set_trials_total(300);
  p.set_workload_key("conv2d N=1 C=16 H=48 W=192 K=32 R=3 S=3 fp32 act=relu");
  p.set_device_key(device_key);
  p.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  return p;
}

TEST(CliFormatTable, ColumnsAreAsWideAsTheirWidestCell) {
  const std::string table = cli::FormatTable(
      {"A", "NUMBER", "LAST"},
      {{"short", "1", "x"}, {"a much longer cell", "12345", "y"}},
      {false, true, false});
  const std::vector<std::string> lines = Lines(table);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "A                   NUMBER  LAST");
  EXPECT_EQ(lines[1], "short                    1  x");
  EXPECT_EQ(lines[2], "a much longer cell   12345  y");
}

TEST(CliFormatTable, CountsUtf8Characters) {
  const std::vector<std::string> lines = Lines(
      cli::FormatTable({"NAME", "COUNT"}, {{"Gerät", "1"}, {"abcde", "2"}}));
  ASSERT_EQ(lines.size(), 3u);
  // "ä" is two bytes and one character: one byte further, same column.
  EXPECT_EQ(Column(lines[1], "1"), Column(lines[0], "COUNT") + 1);
  EXPECT_EQ(Column(lines[2], "2"), Column(lines[0], "COUNT"));
}

TEST(CliJobTable, ALongDeviceKeyKeepsTheColumnsAligned) {
  const std::vector<std::string> lines =
      Lines(cli::JobTable({Job(7, kLongKey), Job(123456, "short-key")}));
  ASSERT_EQ(lines.size(), 3u);
  const size_t strategy = Column(lines[0], "STRAT");
  EXPECT_EQ(Column(lines[1], "random"), strategy) << lines[1];
  EXPECT_EQ(Column(lines[2], "random"), strategy) << lines[2];
  EXPECT_EQ(Column(lines[1], kLongKey), Column(lines[0], "DEVICE KEY"));
  EXPECT_EQ(Column(lines[2], "short-key"), Column(lines[0], "DEVICE KEY"));
  // The whole workload, never cut.
  EXPECT_NE(lines[1].find("fp32 act=relu"), std::string::npos);
}

TEST(CliRecordTable, ALongDeviceKeyKeepsTheColumnsAligned) {
  std::vector<tunefleet::v1::TuningRecord> records(2);
  records[0].set_device_key(kLongKey);
  records[0].set_workload_key("gemm M=1024 N=1024 K=1024 fp32");
  records[0].set_time_ns(1.5e6);
  records[0].set_gflops(1431.65);
  records[1].set_device_key("k");
  records[1].set_workload_key("gemm M=8 N=8 K=8 fp32");
  records[1].set_time_ns(2e3);
  records[1].set_gflops(0.5);
  auto* knob = records[1].mutable_config()->add_knobs();
  knob->set_name("MWG");
  knob->set_value(16);
  const std::vector<std::string> lines = Lines(cli::RecordTable(records));
  ASSERT_EQ(lines.size(), 3u);
  // Right-aligned numbers end where their header ends.
  const size_t gflops_end = Column(lines[0], "GFLOP/s") + 7;
  EXPECT_EQ(Column(lines[1], "1431.65") + 7, gflops_end) << lines[1];
  EXPECT_EQ(Column(lines[2], "0.50") + 4, gflops_end) << lines[2];
  EXPECT_EQ(Column(lines[2], "MWG=16"), Column(lines[0], "CONFIG"));
}

// A workload as long as a fused conv's with every attribute.
const char kLongWorkload[] =
    "conv2d N=1 C=256 H=56 W=56 K=512 R=3 S=3 stride=2,2 pad=1,1,1,1 "
    "dilation=1,1 groups=1 fp32 bias=1 act=relu residual=1";

// The lines of `table`, drawn for `width` columns: `rows` of them (the
// test fails otherwise; missing ones are empty), none wider than `width`.
std::vector<std::string> LinesWithin(const std::string& table, size_t width,
                                     size_t rows) {
  std::vector<std::string> lines = Lines(table);
  EXPECT_EQ(lines.size(), rows) << table;
  for (const std::string& line : lines) {
    EXPECT_LE(cli::TextWidth(line), width) << line;
  }
  lines.resize(rows);
  return lines;
}

// `text` holds each of `cells` in full.
void ExpectWhole(const std::string& text,
                 const std::vector<std::string>& cells) {
  for (const std::string& cell : cells) {
    EXPECT_NE(text.find(cell), std::string::npos) << cell;
  }
}

TEST(CliJobTable, ALongWorkloadIsCutToTheWidthAndWideShowsIt) {
  JobProgress long_job = Job(7, kLongKey);
  long_job.set_workload_key(kLongWorkload);
  JobProgress short_job = Job(8, "short-key");
  short_job.set_workload_key("gemm M=8 N=8 K=8 fp32");
  const std::vector<JobProgress> jobs = {long_job, short_job};
  const std::vector<std::string> lines =
      LinesWithin(cli::JobTable(jobs, 100), 100, 3);
  EXPECT_NE(lines[1].find("conv2d N=1 C=256"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("…"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find("residual=1"), std::string::npos) << lines[1];
  // The columns stay aligned (in characters: "…" is three bytes) and the
  // short row is whole.
  auto at = [](const std::string& line, const std::string& cell) {
    return cli::TextWidth(line.substr(0, Column(line, cell)));
  };
  EXPECT_EQ(at(lines[1], "random"), at(lines[0], "STRAT"));
  EXPECT_EQ(at(lines[2], "random"), at(lines[0], "STRAT"));
  EXPECT_NE(lines[2].find("short-key"), std::string::npos);
  EXPECT_EQ(lines[2].find("…"), std::string::npos) << lines[2];

  // --wide (no width): every cell in full.
  const std::string wide = cli::JobTable(jobs, 0);
  ExpectWhole(wide, {kLongWorkload, kLongKey});
  EXPECT_EQ(wide.find("…"), std::string::npos);
}

TEST(CliRecordTable, LongCellsAreCutToTheWidthAndWideShowsThem) {
  std::vector<tunefleet::v1::TuningRecord> records(1);
  records[0].set_device_key(kLongKey);
  records[0].set_workload_key(kLongWorkload);
  records[0].set_time_ns(1.5e6);
  records[0].set_gflops(1431.65);
  records[0].set_error(tunefleet::v1::Measurement::OK);
  for (const char* name : {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM"}) {
    auto* knob = records[0].mutable_config()->add_knobs();
    knob->set_name(name);
    knob->set_value(64);
  }
  const std::vector<std::string> lines =
      LinesWithin(cli::RecordTable(records, 80), 80, 2);
  EXPECT_NE(lines[1].find("…"), std::string::npos) << lines[1];
  // The numbers are never cut.
  EXPECT_NE(lines[1].find("1431.65"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("1.5000"), std::string::npos) << lines[1];

  ExpectWhole(cli::RecordTable(records, 0),
              {kLongWorkload, kLongKey, "VWM=64"});
}

TEST(CliSummary, SaysSlowerWhenTheNaiveReferenceWon) {
  EXPECT_EQ(cli::SpeedupText(1.0, 1.7),
            "tuned kernel is 1.7x slower than the naive reference");
  EXPECT_EQ(cli::SpeedupText(2.3, 1.0),
            "tuned kernel is 2.3x faster than the naive reference");
  EXPECT_EQ(cli::SpeedupText(1.0, 1.02),
            "tuned kernel is as fast as the naive reference");
  EXPECT_EQ(cli::RelativeSpeed(0.6, 1.0), "1.7x slower");
}

TEST(CliSummary, NamesASearchSpaceThatRanOutBeforeTheBudget) {
  JobProgress p;
  p.set_state(tunefleet::v1::JOB_STATE_DONE);
  p.set_space_size(16);
  p.set_trials_total(30);
  p.set_trials_done(16);
  EXPECT_EQ(cli::SpaceExhaustedText(p),
            "search space has 16 configs; all measured before the 30-trial "
            "budget");
  // The budget, not the space, ended it.
  p.set_trials_total(16);
  EXPECT_EQ(cli::SpaceExhaustedText(p), "");
  p.set_trials_total(30);
  p.set_trials_done(10);  // ended otherwise (deadline, early stop)
  EXPECT_EQ(cli::SpaceExhaustedText(p), "");
  p.set_trials_done(16);
  p.set_state(tunefleet::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cli::SpaceExhaustedText(p), "");
}

TEST(CliCancel, OneCountAndTheTrialsInFlight) {
  JobProgress p;
  p.set_job_id(62);
  p.set_state(tunefleet::v1::JOB_STATE_CANCELLED);
  p.set_trials_done(3);
  p.set_trials_total(300);
  EXPECT_EQ(cli::CancelledText(p), "cancelled job 62: 3 of 300 trials done");
  p.add_in_flight_trial_ids(55);
  EXPECT_EQ(cli::CancelledText(p),
            "cancelled job 62: 3 of 300 trials done; 1 in flight (trial 55) "
            "ends unmeasured (CANCELLED)");
  p.add_in_flight_trial_ids(56);
  EXPECT_EQ(cli::CancelledText(p),
            "cancelled job 62: 3 of 300 trials done; 2 in flight (trials 55, "
            "56) end unmeasured (CANCELLED)");
  for (int i = 0; i < 10; ++i) p.add_in_flight_trial_ids(100 + i);
  EXPECT_NE(cli::CancelledText(p).find("12 in flight (trials 55, 56, 100,"),
            std::string::npos)
      << cli::CancelledText(p);
  EXPECT_NE(cli::CancelledText(p).find("107 and 2 more)"), std::string::npos)
      << cli::CancelledText(p);
}

// What a ProgressPrinter wrote to a temporary file.
std::string Printed(const std::vector<JobProgress>& updates) {
  FILE* out = std::tmpfile();
  {
    cli::ProgressPrinter printer(/*quiet=*/false, out);
    for (const JobProgress& p : updates) printer.Update(p);
    printer.End();
  }
  return testing::Drain(out);
}

TEST(CliProgress, ShowsTheWaitingReasonOncePerChange) {
  JobProgress waiting = Job(9, "board");
  waiting.set_trials_done(0);
  waiting.set_waiting_reason("no agent of device key 'board' is connected");
  JobProgress other = waiting;
  other.set_waiting_reason(
      "no agent of device key 'board' is connected; "
      "connected: x (1 agent)");
  JobProgress going = waiting;
  going.clear_waiting_reason();
  going.set_trials_done(30);
  const std::string text =
      Printed({waiting, waiting, waiting, other, other, going, waiting});
  EXPECT_EQ(Count(text,
                  "job 9 waits: no agent of device key 'board' is "
                  "connected\n"),
            2u)
      << text;
  EXPECT_EQ(Count(text, "connected: x (1 agent)"), 1u) << text;
  EXPECT_EQ(Count(text, "[  30/300]"), 1u) << text;
}

TEST(CliJson, JobsAndRecordsAreTheContractsJson) {
  JobProgress p = Job(5, "k");
  p.add_in_flight_trial_ids(8);
  p.set_waiting_reason("w");
  p.set_created_unix_ms(int64_t{1} << 41);
  (*p.mutable_errors())["COMPILE_ERROR"] = 1;
  tunefleet::v1::TuningRecord* best = p.mutable_best();
  best->set_agent_name("a");
  best->set_trial_id(int64_t{1} << 40);
  auto* knob = best->mutable_config()->add_knobs();
  knob->set_name("MWG");
  knob->set_value(16);
  const std::regex snake("[a-z][a-z0-9_]*");
  // Error codes are data, not keys of the format.
  const std::function<void(const nlohmann::json&)> check =
      [&](const nlohmann::json& j) {
        if (j.is_array()) {
          for (const auto& e : j) check(e);
        }
        if (!j.is_object()) return;
        for (const auto& [key, value] : j.items()) {
          EXPECT_TRUE(std::regex_match(key, snake)) << key;
          EXPECT_FALSE(value.is_string() && key.find("_id") != key.npos)
              << key << " is an id written as a string";
          if (key != "errors") check(value);
        }
      };
  // The one JSON of a job (contract/json.h): what `jobs --json` and the
  // dashboard's API print.
  const nlohmann::json job = contract::ContractJson(p);
  check(job);
  EXPECT_EQ(job["job_id"], 5);
  EXPECT_EQ(job["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(job["trials_done"], p.trials_done());
  EXPECT_EQ(job["created_unix_ms"], int64_t{1} << 41);
  EXPECT_EQ(job["in_flight_trial_ids"], nlohmann::json::array({8}));
  EXPECT_EQ(job["waiting_reason"], "w");
  EXPECT_TRUE(job["model"].is_null());
  const nlohmann::json record = contract::ContractJson(*best);
  check(record);
  EXPECT_EQ(record["trial_id"], int64_t{1} << 40);
  EXPECT_EQ(record["config"]["knobs"][0]["name"], "MWG");
  EXPECT_EQ(record["config"]["knobs"][0]["value"], 16);
  for (const char* key :
       {"agent_name", "created_unix_ms", "measured_unix_ms", "compile_ms",
        "error_message", "workload_key", "template_name"}) {
    EXPECT_TRUE(record.contains(key)) << key;
  }
}

TEST(CliJson, ErrorsAreJsonWithJson) {
  // ReportError's JSON form: one object on stderr.
  ::testing::internal::CaptureStderr();
  cli::SetJsonErrors(true);
  const int code =
      cli::ReportError("query", absl::NotFoundError("no database x.db"));
  cli::SetJsonErrors(false);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, cli::kExitBadInput);
  const nlohmann::json j = nlohmann::json::parse(err);
  EXPECT_EQ(j["error"], "no database x.db");
  EXPECT_EQ(j["code"], "NOT_FOUND");
  EXPECT_EQ(j["command"], "query");
}

TEST(CliModelBudget, TasksWithoutATrialAreWarnedOfAndListed) {
  EXPECT_EQ(cli::BudgetWarning(126, 126, 60), "");
  EXPECT_EQ(cli::BudgetWarning(20, 126, 60),
            "warning: a budget of 20 trials for 126 tasks leaves at least 106 "
            "tasks without a trial; --trials 126 (or --trials-per-task 3: 60 "
            "workloads) gives each task one\n");
  // --trials-per-task 2 of 60 workloads (120 trials) for 126 tasks.
  EXPECT_NE(cli::BudgetWarning(120, 126, 60).find("--trials-per-task 3"),
            std::string::npos);
  EXPECT_EQ(cli::UntriedTasksText({}, 3), "");
  const std::string text = cli::UntriedTasksText(
      {{4, "pool2d N=1 C=8", "pool2d_direct", 0}, {7, "eltwise N=3", "", 0}},
      9);
  EXPECT_EQ(text,
            "2 of 9 tasks got no trial (the budget ran out before them; more "
            "--trials or --trials-per-task reaches them):\n"
            "  task 4 pool2d N=1 C=8 [pool2d_direct]\n"
            "  task 7 eltwise N=3\n");
}

TEST(CliTaskLine, ShowsTheOpAndTheWholeWorkload) {
  onnx_import::ModelTask a{{*templates::Workload::Parse(
      "conv2d", "N=1,C=16,H=48,W=192,K=32,R=3,S=3,PH=1,PW=1,act=relu")}};
  onnx_import::ModelTask b{{*templates::Workload::Parse(
      "conv2d", "N=1,C=16,H=48,W=192,K=32,R=3,S=3,PH=1,PW=1")}};
  a.count = b.count = 1;
  tunefleet::v1::ModelTaskProgress p;
  p.mutable_job()->set_state(tunefleet::v1::JOB_STATE_DONE);
  p.mutable_job()->set_trials_done(4);
  p.set_trials_granted(6);
  const size_t width = a.workload.Canonical().size();
  const std::string line_a = cli::TaskLine(1, 2, width, a, p);
  const std::string line_b = cli::TaskLine(2, 2, width, b, p);
  // The trials done of those the task scheduler granted.
  EXPECT_NE(line_a.find("(4/6 trials)"), std::string::npos) << line_a;
  EXPECT_NE(line_a.find(a.workload.Canonical()), std::string::npos) << line_a;
  EXPECT_NE(line_b.find(b.workload.Canonical()), std::string::npos) << line_b;
  EXPECT_NE(line_a.find("] conv2d "), std::string::npos) << line_a;
  // Everything after the index differs, and the columns line up.
  EXPECT_NE(line_a.substr(7), line_b.substr(7));
  EXPECT_EQ(line_a.find(" x1 "), line_b.find(" x1 "));
}

TEST(CliServerAddress, AMissingPortIsRefusedBeforeDialling) {
  for (const char* bad : {"127.0.0.1", "http://127.0.0.1:7878", "", "host:"}) {
    absl::StatusOr<std::string> checked = client::CheckServerAddress(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(checked.status())) << bad;
    EXPECT_NE(checked.status().message().find("HOST:PORT"), std::string::npos)
        << checked.status();
    EXPECT_NE(checked.status().message().find("--server"), std::string::npos);
    EXPECT_TRUE(absl::IsInvalidArgument(
        client::ConnectionTo(bad, client::ChannelFiles()).status()));
  }
  EXPECT_EQ(*client::CheckServerAddress("127.0.0.1:7878"), "127.0.0.1:7878");
  EXPECT_EQ(*client::CheckServerAddress("[::1]:7878"), "[::1]:7878");
  absl::StatusOr<client::ServerConnection> ok =
      client::ConnectionTo("localhost:7878", client::ChannelFiles());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->address, "localhost:7878");
}

// gRPC 1.51's messages, as the real servers give them.
TEST(CliRpcError, TransportFailuresBecomeAdvice) {
  const std::string at = "127.0.0.1:7878";
  absl::Status s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "failed to connect to all addresses; last error: UNKNOWN: "
                   "ipv4:127.0.0.1:7878: Failed to connect to remote host: "
                   "Connection refused"),
      at, false);
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_NE(s.message().find("no tunefleet-server answered at 127.0.0.1:7878: "
                             "is it running?"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("tunefleet-server --listen"), std::string::npos);

  s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "failed to connect to all addresses; last error: "
                   "UNAVAILABLE: ipv4:127.0.0.1:7878: Socket closed"),
      at, false);
  EXPECT_NE(s.message().find("seems to use TLS; pass --ca"), std::string::npos)
      << s;

  s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "failed to connect to all addresses; last error: UNKNOWN: "
                   "ipv4:127.0.0.1:7878: Ssl handshake failed: SSL_ERROR_SSL: "
                   "error:0A00010B:SSL routines::wrong version number"),
      at, true);
  EXPECT_NE(s.message().find("does not speak TLS"), std::string::npos) << s;
  EXPECT_NE(s.message().find("leave out --ca"), std::string::npos) << s;

  s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "failed to connect to all addresses; last error: UNKNOWN: "
                   "ipv4:127.0.0.1:7878: Ssl handshake failed: SSL_ERROR_SSL: "
                   "error:0A000086:SSL routines::certificate verify failed"),
      at, true);
  EXPECT_NE(s.message().find("not signed by the CA in --ca"), std::string::npos)
      << s;
  // A CA from the environment is named as such, not as --ca.
  setenv("TUNEFLEET_CA", "/etc/x/ca.pem", 1);
  s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "Ssl handshake failed: certificate verify failed"),
      at, true);
  unsetenv("TUNEFLEET_CA");
  EXPECT_NE(s.message().find("not signed by the CA in TUNEFLEET_CA "
                             "(/etc/x/ca.pem"),
            std::string::npos)
      << s;
}

TEST(CliRpcError, TokenProblemsKeepTheServersReasonAndSayWhatToDo) {
  absl::Status s = client::RpcError(
      grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                   "no access token: every call must carry ..."),
      "h:1", false);
  EXPECT_TRUE(absl::IsUnauthenticated(s));
  EXPECT_NE(s.message().find("no access token"), std::string::npos);
  EXPECT_NE(s.message().find("--token-file"), std::string::npos);
  EXPECT_NE(s.message().find("tunefleet token add"), std::string::npos);
  s = client::RpcError(
      grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                   "CancelJob needs a token of role tuner; token 'd' has role "
                   "reader"),
      "h:1", false);
  EXPECT_TRUE(absl::IsPermissionDenied(s));
  EXPECT_NE(s.message().find("needs a token of role tuner"), std::string::npos);
  EXPECT_NE(s.message().find("--role tuner"), std::string::npos);
  // Other errors are the server's own words.
  s = client::RpcError(grpc::Status(grpc::StatusCode::NOT_FOUND, "no job 5"),
                       "h:1", false);
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "no job 5");
  EXPECT_TRUE(client::RpcError(grpc::Status::OK, "h:1", false).ok());
}

TEST(CliLostJob, SaysTheServerKeepsTheJobAndHowToFollowIt) {
  client::ServerConnection server{"10.0.0.2:7878", {}};
  const absl::Status s = cli::LostJobError(server, 62, "Socket closed");
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_NE(s.message().find("during job 62"), std::string::npos) << s;
  EXPECT_NE(s.message().find("`tunefleet watch 62 --server 10.0.0.2:7878`"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("tunefleet jobs"), std::string::npos) << s;
}

}  // namespace
}  // namespace tunefleet
