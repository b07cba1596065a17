// A model job's end-to-end measurement (issue 36, "tuned against what users
// see"; docs/TUNING.md, "Measured latency"): `tunefleet tune --onnx` sends
// the model, and once the budget is spent an agent of the key runs the
// tuned plan; the job stores the measured latency (median, p10, p90), the
// same figures of the runs with inputs and outputs in device buffers, and
// per-layer times beside the estimate, and its latency history. A
// SIGKILLed and restarted server keeps both; `watch`, `jobs`, the
// dashboard's JSON view and `report` (drawn by a real Chromium where one is
// installed) show them. A job sent without its model ends done and says why
// its measurement is missing. Real tunefleet-server and tunefleet-agent
// processes on loopback, real SQLite, real OpenCL (PoCL in CI).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/http_get.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kMeasuredKey[] = "measured";

std::optional<nlohmann::json> GetJson(int port, const std::string& path,
                                      const std::string& token) {
  httplib::Result res = testing::HttpGet(port, path, token);
  if (!res || res->status != 200) return std::nullopt;
  return nlohmann::json::parse(res->body, nullptr, false);
}

TEST(ModelMeasure, TuneMeasuresEndToEndAndARestartedServerKeepsIt) {
  FleetHarness fleet("model_measure");
  const int http_port = testing::FreePort();
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}))
      << ReadAll(fleet.dir() + "/server.log");
  ASSERT_TRUE(fleet.StartAgents(1, kMeasuredKey))
      << ReadAll(fleet.agent_log(0));
  const std::string dir = fleet.dir();
  const std::string model = dir + "/small.onnx";
  std::ofstream(model, std::ios::binary) << testing::SmallNet();
  const std::string token = dir + "/tuner.token";
  std::ofstream(token) << fleet.tuner_token() << "\n";
  const std::string server =
      " --server " + fleet.address() + " --token-file " + token;

  // One trial per task; the naive reference kernels timed once each.
  auto tuned = RunCommand(
      "cd " + dir + " && " + CliBinary() + " tune --onnx " + model +
      " --input-shape " + kSmallNetShape + server +
      " --trials 8 --strategy random --no-library --no-transfer --repeat 1 "
      "--number 1 --min-repeat-ms 0 --quiet --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err << ReadAll(dir + "/server.log")
                                << ReadAll(fleet.agent_log(0));
  const nlohmann::json j = nlohmann::json::parse(tuned.out);
  const int64_t id = j["job_id"].get<int64_t>();
  ASSERT_TRUE(j["model"]["measured"].is_object()) << tuned.out;
  const nlohmann::json& measured = j["model"]["measured"];
  ASSERT_EQ(measured["missing_reason"], "") << measured.dump(2);
  const double median = measured["median_ns"].get<double>();
  EXPECT_GT(measured["p10_ns"].get<double>(), 0);
  EXPECT_LE(measured["p10_ns"].get<double>(), median);
  EXPECT_GE(measured["p90_ns"].get<double>(), median);
  EXPECT_GT(measured["estimate_ns"].get<double>(), 0);
  // The same plan with its inputs and outputs in device buffers, as many
  // runs.
  const double on_device = measured["device_buffers_median_ns"].get<double>();
  EXPECT_GT(on_device, 0) << measured.dump(2);
  EXPECT_GT(measured["device_buffers_p10_ns"].get<double>(), 0);
  EXPECT_LE(measured["device_buffers_p10_ns"].get<double>(), on_device);
  EXPECT_GE(measured["device_buffers_p90_ns"].get<double>(), on_device);
  const uint32_t runs = measured["runs"].get<uint32_t>();
  EXPECT_GT(runs, 0u);
  EXPECT_EQ(measured["device_buffers_runs"].get<uint32_t>(), runs);
  // Per layer: as many as the plan has steps (`tunefleet run` of the same
  // model and records on the same agent).
  auto run = RunCommand("cd " + dir + " && " + CliBinary() + " run --onnx " +
                        model + " --input-shape " + kSmallNetShape + server +
                        " --runs 1 --warmup 0 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int plan_layers = nlohmann::json::parse(run.out)["layers"].get<int>();
  ASSERT_GT(plan_layers, 0);
  EXPECT_EQ(measured["layers"].size(), static_cast<size_t>(plan_layers));
  ASSERT_EQ(j["layers"].size(), static_cast<size_t>(plan_layers));
  double share = 0;
  for (const auto& l : j["layers"]) share += l["share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-6);
  EXPECT_FALSE(j["model"]["latency_history"].empty());

  // `watch` of the finished job and `jobs` show them.
  auto watch = RunCommand(CliBinary() + " watch " + std::to_string(id) +
                          server + " --quiet");
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_THAT(watch.out, HasSubstr("measured latency (end to end on"));
  EXPECT_THAT(watch.out,
              HasSubstr("; on the device (inputs and outputs in device "
                        "buffers, " +
                        std::to_string(runs) + " runs): median "));
  EXPECT_THAT(watch.out, HasSubstr("SHARE"));
  EXPECT_THAT(watch.out, HasSubstr("SPEEDUP"));
  auto jobs = RunCommand(CliBinary() + " jobs" + server + " --wide");
  EXPECT_THAT(jobs.out, HasSubstr("(est ")) << jobs.out;
  EXPECT_THAT(jobs.out, HasSubstr(", on device ")) << jobs.out;

  // The dashboard's JSON view of the model job.
  std::optional<nlohmann::json> view = GetJson(
      http_port, "/api/jobs/" + std::to_string(id), fleet.reader_token());
  ASSERT_TRUE(view.has_value());
  const nlohmann::json& vm = (*view)["job"]["model"];
  EXPECT_DOUBLE_EQ(vm["measured"]["median_ns"].get<double>(), median);
  EXPECT_DOUBLE_EQ(vm["measured"]["device_buffers_median_ns"].get<double>(),
                   on_device);
  EXPECT_EQ(vm["measured"]["layers"].size(), static_cast<size_t>(plan_layers));
  const size_t history = vm["latency_history"].size();
  EXPECT_GT(history, 0u);

  // A model job without its model (--no-measure) still ends done, and says
  // why its measurement is missing.
  auto bare = RunCommand("cd " + dir + " && " + CliBinary() + " tune --onnx " +
                         model + " --input-shape " + kSmallNetShape + server +
                         " --trials 2 --strategy random --no-library "
                         "--no-transfer --repeat 1 --number 1 "
                         "--min-repeat-ms 0 --quiet --json --no-measure");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  const nlohmann::json b = nlohmann::json::parse(bare.out);
  EXPECT_EQ(b["state"], "JOB_STATE_DONE");
  EXPECT_THAT(b["model"]["measured"]["missing_reason"].get<std::string>(),
              HasSubstr("carried no ONNX model"));
  EXPECT_EQ(b["model"]["measured"]["median_ns"].get<double>(), 0);
  EXPECT_EQ(b["model"]["measured"]["device_buffers_median_ns"].get<double>(),
            0);

  // SIGKILL, then a new server on the same database keeps both.
  fleet.server().Kill(SIGKILL);
  ASSERT_TRUE(
      fleet.StartServer({"--http", absl::StrCat("127.0.0.1:", http_port)}))
      << ReadAll(dir + "/server.log");
  std::optional<tunefleet::v1::JobProgress> after =
      fleet.GetJob(id, std::chrono::seconds(5));
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_DOUBLE_EQ(after->model().measured().median_ns(), median);
  EXPECT_DOUBLE_EQ(after->model().measured().device_buffers_median_ns(),
                   on_device);
  EXPECT_DOUBLE_EQ(after->model().measured().device_buffers_p10_ns(),
                   measured["device_buffers_p10_ns"].get<double>());
  EXPECT_DOUBLE_EQ(after->model().measured().device_buffers_p90_ns(),
                   measured["device_buffers_p90_ns"].get<double>());
  EXPECT_EQ(after->model().measured().device_buffers_runs(), runs);
  EXPECT_EQ(after->model().measured().layers_size(), plan_layers);
  EXPECT_EQ(static_cast<size_t>(after->model().latency_history_size()),
            history);
  fleet.server().Kill(SIGTERM);
  fleet.server().Wait();

  // The database as the store reads it.
  {
    absl::StatusOr<std::unique_ptr<store::Store>> db =
        store::Store::Open(fleet.db_path());
    ASSERT_TRUE(db.ok()) << db.status();
    auto stored = (*db)->GetModelMeasurement(id);
    ASSERT_TRUE(stored.ok() && stored->has_value());
    EXPECT_EQ((**stored).layers_size(), plan_layers);
    EXPECT_DOUBLE_EQ((**stored).device_buffers_median_ns(), on_device);
    EXPECT_EQ((**stored).device_buffers_runs(), runs);
    auto points = (*db)->ModelLatencyHistory(id);
    ASSERT_TRUE(points.ok());
    EXPECT_EQ(points->size(), history);
  }

  // `report` of the finished model job: its data, drawn.
  const std::string html = dir + "/report.html";
  auto report = RunCommand(CliBinary() + " report --db " + fleet.db_path() +
                           " --job " + std::to_string(id) + " --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = ReadAll(html);
  EXPECT_THAT(page, HasSubstr("\"latency_history\""));
  EXPECT_THAT(page, HasSubstr("\"median_ns\""));
  EXPECT_THAT(page, HasSubstr("\"device_buffers_median_ns\""));
  if (RunCommand("command -v chromium").exit_code != 0) {
    GTEST_SKIP() << "chromium is not installed";
  }
  const std::string dom =
      RunCommand(
          "chromium --headless=new --no-sandbox --disable-gpu "
          "--window-size=1280,900 --virtual-time-budget=10000 "
          "--dump-dom 'file://" +
          html + "'")
          .out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      dom, m,
      std::regex("<canvas[^>]*class=\"latency-chart\"[^>]*data-rendered="
                 "\"true\"[^>]*data-points=\"(\\d+)\"")))
      << dom.substr(0, 4000);
  // The history, the measured median, p10 and p90, and the median with
  // device buffers.
  EXPECT_EQ(std::stoul(m[1]), history + 4);
  EXPECT_THAT(dom, HasSubstr("class=\"layer-table\""));
  EXPECT_THAT(dom, HasSubstr("class=\"measured-latency\""));
  EXPECT_THAT(dom, HasSubstr("class=\"device-buffers-latency\""));
  EXPECT_THAT(dom, HasSubstr("speedup over naive"));
}

}  // namespace
}  // namespace tunefleet::testing
