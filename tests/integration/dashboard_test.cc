// The web dashboard end to end: a tunefleet-server with --http and a tokens
// file, one agent on PoCL, a small job; then headless Chromium (Debian's
// chromium, driven by chromedriver) signs in with a reader token and draws
// the job page, and takes no token from the address; plain HTTP calls check
// that a wrong or missing token gets 401 and no data, `tunefleet dashboard
// --db` answers the same API from the database file read-only, and
// `tunefleet report` writes one self-contained HTML file that Chromium
// draws offline.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "auth/tokens.h"
#include "dashboard/report.h"
#include "dashboard/web_assets.h"
#include "data_source/data_source.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kernels_templates/workload.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/drifted_device.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/http_get.h"
#include "tests/support/process.h"
#include "tests/support/webdriver.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kTrials = 6;

bool HaveChromium() { return RunCommand("command -v chromium").exit_code == 0; }

// Chromium's DOM of `url` after its scripts ran (virtual time: the page's
// fetches and charts complete before the dump).
std::string DumpDom(const std::string& url) {
  return RunCommand(
             absl::StrCat("chromium --headless=new --no-sandbox --disable-gpu "
                          "--window-size=1280,900 --virtual-time-budget=10000 "
                          "--dump-dom '",
                          url, "'"))
      .out;
}

// The points on the trials chart Chart.js drew in `dom` (its canvas's
// data-points once data-rendered); -1 when no drawn chart is there.
int DrawnChartPoints(const std::string& dom) {
  const std::regex chart(
      "<canvas[^>]*class=\"trials-chart\"[^>]*data-rendered=\"true\"[^>]*"
      "data-points=\"(\\d+)\"");
  std::smatch m;
  return std::regex_search(dom, m, chart) ? std::stoi(m[1]) : -1;
}

class Dashboard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fleet_ = std::make_unique<FleetHarness>("dashboard");
    http_port_ = FreePort();
    ASSERT_TRUE(
        fleet_->StartServer({"--http", absl::StrCat("127.0.0.1:", http_port_)}))
        << testing::ReadAll(fleet_->dir() + "/server.log");
    fleet_->StartAgent(0, "dash");
    // Up once the fleet page shows the agent connected.
    ASSERT_TRUE(FleetHarness::WaitFor(
        [] {
          auto res = HttpGet(http_port_, "/api/fleet", fleet_->reader_token());
          return res && res->status == 200 &&
                 res->body.find("\"connected\":true") != std::string::npos;
        },
        std::chrono::seconds(60)))
        << testing::ReadAll(fleet_->dir() + "/server.log");

    tunefleet::v1::SubmitJobRequest request;
    *request.mutable_workload() = trial::WorkloadToProto(
        *templates::Workload::Parse("gemm", "M=32,N=32,K=32"));
    request.set_device_key("dash");
    request.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
    request.set_trials(kTrials);
    request.set_seed(7);
    request.set_no_transfer(true);
    *request.mutable_timing() = testing::QuickTiming();
    job_id_ = fleet_->Submit(request);
    ASSERT_GT(job_id_, 0);
    ASSERT_TRUE(FleetHarness::WaitFor(
        [] {
          auto res = HttpGet(http_port_, absl::StrCat("/api/jobs/", job_id_),
                             fleet_->reader_token());
          return res && res->status == 200 &&
                 res->body.find("JOB_STATE_DONE") != std::string::npos;
        },
        std::chrono::seconds(240)))
        << testing::ReadAll(fleet_->dir() + "/server.log");
  }
  static void TearDownTestSuite() { fleet_.reset(); }
  static std::string db_path() { return fleet_->db_path(); }

  // Starts Chromium in *browser (testing::StartWebDriver: null when the
  // test is skipped), opens the job's page and signs in with `token`
  // through the sign-in form.
  static void SignInOnTheJobPage(const std::string& token,
                                 std::unique_ptr<testing::WebDriver>* browser) {
    testing::StartWebDriver(fleet_->dir() + "/chromedriver.log", browser);
    if (*browser == nullptr) return;
    testing::WebDriver& b = **browser;
    b.Navigate(
        absl::StrCat("http://127.0.0.1:", http_port_, "/#/job/", job_id_));
    const std::string input =
        b.WaitFind("form.login input#token", std::chrono::seconds(20));
    ASSERT_FALSE(input.empty()) << b.Source().substr(0, 4000);
    b.Type(input, token);
    b.Click(b.Find("form.login button"));
  }

  static inline std::unique_ptr<FleetHarness> fleet_;
  static inline int http_port_ = 0;
  static inline int64_t job_id_ = 0;
};

TEST_F(Dashboard, WrongOrMissingTokenGets401AndNoData) {
  const std::string jobs = "/api/jobs";
  const std::string trials = absl::StrCat("/api/jobs/", job_id_, "/trials");
  for (const std::string& path : {jobs, trials, std::string("/api/fleet")}) {
    for (const std::string& token : {std::string(""), std::string("wrong")}) {
      auto res = HttpGet(http_port_, path, token);
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 401) << path << " token '" << token << "'";
      EXPECT_THAT(res->body, Not(HasSubstr("gemm"))) << path;
      EXPECT_THAT(res->body, Not(HasSubstr("agent-0"))) << path;
      EXPECT_THAT(res->body, Not(HasSubstr("trials"))) << path;
      EXPECT_THAT(res->body, HasSubstr("\"error\""));
    }
  }
  // /metrics (Prometheus) sits behind the same rule.
  auto metrics = HttpGet(http_port_, "/metrics", "");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  EXPECT_THAT(metrics->body, Not(HasSubstr("# TYPE")));
  metrics = HttpGet(http_port_, "/metrics", fleet_->reader_token());
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"),
            "text/plain; version=0.0.4");
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE"));
  // An agent's token reads nothing either.
  auto agent = HttpGet(http_port_, jobs, fleet_->agent_token());
  ASSERT_TRUE(agent);
  EXPECT_EQ(agent->status, 403);
  EXPECT_THAT(agent->body, Not(HasSubstr("gemm")));
  // A reader reads, but may not cancel.
  auto reader = HttpGet(http_port_, jobs, fleet_->reader_token());
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->status, 200);
  EXPECT_THAT(reader->body, HasSubstr("gemm M=32 N=32 K=32 fp32"));
  httplib::Client client("127.0.0.1", http_port_);
  auto cancel =
      client.Post(absl::StrCat("/api/jobs/", job_id_, "/cancel").c_str(),
                  {{"Authorization", "Bearer " + fleet_->reader_token()}}, "{}",
                  "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 403);
  // A tuner may, but the job has ended.
  cancel = client.Post(absl::StrCat("/api/jobs/", job_id_, "/cancel").c_str(),
                       {{"Authorization", "Bearer " + fleet_->tuner_token()}},
                       "{}", "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 409) << cancel->body;
}

TEST_F(Dashboard, ApiAnswersJobTrialsAndFleet) {
  auto job = HttpGet(http_port_, absl::StrCat("/api/jobs/", job_id_),
                     fleet_->reader_token());
  ASSERT_TRUE(job);
  ASSERT_EQ(job->status, 200);
  const nlohmann::json progress = nlohmann::json::parse(job->body)["job"];
  EXPECT_EQ(progress["trials_done"], kTrials);
  EXPECT_EQ(progress["device_key"], "dash");

  auto all = HttpGet(http_port_, absl::StrCat("/api/jobs/", job_id_, "/trials"),
                     fleet_->reader_token());
  ASSERT_TRUE(all);
  const nlohmann::json trials = nlohmann::json::parse(all->body)["trials"];
  ASSERT_EQ(trials.size(), static_cast<size_t>(kTrials));
  EXPECT_THAT(trials[0]["config_text"].get<std::string>(), HasSubstr("MWG="));
  // Live updates ask for the trials after the last one they have.
  const int64_t third = trials[2]["trial_id"];
  auto after = HttpGet(
      http_port_, absl::StrCat("/api/jobs/", job_id_, "/trials?after=", third),
      fleet_->reader_token());
  ASSERT_TRUE(after);
  EXPECT_EQ(nlohmann::json::parse(after->body)["trials"].size(),
            static_cast<size_t>(kTrials - 3));

  auto fleet = HttpGet(http_port_, "/api/fleet", fleet_->reader_token());
  ASSERT_TRUE(fleet);
  const nlohmann::json f = nlohmann::json::parse(fleet->body);
  EXPECT_TRUE(f["live"]);
  ASSERT_EQ(f["agents"].size(), 1u);
  EXPECT_EQ(f["agents"][0]["name"], "agent-0");
  EXPECT_TRUE(f["agents"][0]["connected"]);
  EXPECT_EQ(f["agents"][0]["measured"], kTrials);
  EXPECT_GT(f["agents"][0]["last_seen_ms"].get<int64_t>(), 0);
  ASSERT_EQ(f["devices"].size(), 1u);
  EXPECT_EQ(f["devices"][0]["connected_agents"], 1);
}

// The page as a user opens it: the sign-in form, then the job page.
TEST_F(Dashboard, ChromiumDrawsTheJobPageAfterSignIn) {
  std::unique_ptr<testing::WebDriver> browser;
  ASSERT_NO_FATAL_FAILURE(SignInOnTheJobPage(fleet_->reader_token(), &browser));
  if (browser == nullptr) return;  // skipped
  ASSERT_FALSE(browser
                   ->WaitFind("canvas.trials-chart[data-rendered=\"true\"]",
                              std::chrono::seconds(30))
                   .empty())
      << browser->Source().substr(0, 4000);
  const std::string dom = browser->Source();
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("class=\"job-id\">", job_id_, "<")));
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("data-count=\"", kTrials, "\"")));
  EXPECT_THAT(dom, HasSubstr("gemm M=32 N=32 K=32 fp32"));
  // The trials chart drawn by Chart.js, one point per trial.
  const int points = DrawnChartPoints(dom);
  ASSERT_GE(points, 0) << dom.substr(0, 4000);
  EXPECT_EQ(points, kTrials);
  // Chart.js sizes the canvas it draws on.
  EXPECT_TRUE(std::regex_search(
      dom, std::regex("class=\"trials-chart\"[^>]*width=\"[1-9][0-9]*\"")))
      << dom.substr(0, 4000);
  // The token stays in the tab's sessionStorage, out of the address.
  EXPECT_EQ(browser->Run("return sessionStorage.getItem('tunefleet.token');"),
            fleet_->reader_token());
  EXPECT_THAT(browser->Url(), Not(HasSubstr(fleet_->reader_token())));
}

// A token in the link (what the page once took from #/...?token=) is not
// taken: the sign-in form shows, nothing is stored, the address is
// cleaned.
TEST_F(Dashboard, ChromiumDoesNotTakeATokenFromTheAddress) {
  std::unique_ptr<testing::WebDriver> browser;
  testing::StartWebDriver(fleet_->dir() + "/chromedriver.log", &browser);
  if (browser == nullptr) return;  // skipped or failed
  browser->Navigate(absl::StrCat("http://127.0.0.1:", http_port_, "/#/job/",
                                 job_id_, "?token=", fleet_->reader_token()));
  ASSERT_FALSE(
      browser->WaitFind("form.login", std::chrono::seconds(20)).empty())
      << browser->Source().substr(0, 4000);
  EXPECT_TRUE(browser->Run("return sessionStorage.getItem('tunefleet.token');")
                  .is_null());
  EXPECT_THAT(browser->Url(), Not(HasSubstr("token")));
  const std::string dom = browser->Source();
  EXPECT_THAT(dom, Not(HasSubstr("gemm M=32")));
  EXPECT_THAT(dom, Not(HasSubstr("data-rendered")));
}

TEST_F(Dashboard, ChromiumWithAWrongTokenShowsTheLoginForm) {
  std::unique_ptr<testing::WebDriver> browser;
  ASSERT_NO_FATAL_FAILURE(SignInOnTheJobPage("wrong", &browser));
  if (browser == nullptr) return;  // skipped
  ASSERT_FALSE(
      browser->WaitFind("form.login p.bad", std::chrono::seconds(20)).empty())
      << browser->Source().substr(0, 4000);
  const std::string dom = browser->Source();
  EXPECT_THAT(dom, HasSubstr("Token refused"));
  EXPECT_THAT(dom, Not(HasSubstr("gemm M=32")));
  EXPECT_THAT(dom, Not(HasSubstr("data-rendered")));
}

TEST_F(Dashboard, DashboardCommandServesTheDatabaseReadOnly) {
  const int port = FreePort();
  Process dashboard({CliBinary(), "dashboard", "--db", db_path(), "--http",
                     absl::StrCat("127.0.0.1:", port)},
                    fleet_->dir() + "/dashboard.log");
  ASSERT_TRUE(FleetHarness::WaitFor(
      [port] {
        auto res = HttpGet(port, "/api/whoami", "");
        return res && res->status == 200;
      },
      std::chrono::seconds(20)))
      << testing::ReadAll(fleet_->dir() + "/dashboard.log");
  auto jobs = HttpGet(port, "/api/jobs", "");
  ASSERT_TRUE(jobs);
  EXPECT_THAT(jobs->body, HasSubstr("gemm M=32 N=32 K=32 fp32"));
  auto trials =
      HttpGet(port, absl::StrCat("/api/jobs/", job_id_, "/trials"), "");
  ASSERT_TRUE(trials);
  EXPECT_EQ(nlohmann::json::parse(trials->body)["trials"].size(),
            static_cast<size_t>(kTrials));
  auto fleet = HttpGet(port, "/api/fleet", "");
  ASSERT_TRUE(fleet);
  const nlohmann::json f = nlohmann::json::parse(fleet->body);
  EXPECT_FALSE(f["live"]);
  ASSERT_EQ(f["agents"].size(), 1u);
  EXPECT_FALSE(f["agents"][0]["connected"]);
  EXPECT_EQ(f["agents"][0]["measured"], kTrials);
  // Read-only: nothing is cancelled.
  auto whoami = nlohmann::json::parse(HttpGet(port, "/api/whoami", "")->body);
  EXPECT_FALSE(whoami["can_cancel"]);
  httplib::Client client("127.0.0.1", port);
  auto cancel =
      client.Post(absl::StrCat("/api/jobs/", job_id_, "/cancel").c_str(), "{}",
                  "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 409);
  dashboard.Kill(SIGTERM);

  // A missing file is refused, not created.
  const auto missing =
      RunCommand(absl::StrCat(CliBinary(), " dashboard --db ", fleet_->dir(),
                              "/none.db --http 127.0.0.1:0"));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(fleet_->dir() + "/none.db"));
  // A non-loopback address needs tokens and TLS, or --insecure.
  const auto open = RunCommand(absl::StrCat(CliBinary(), " dashboard --db ",
                                            db_path(), " --http 0.0.0.0:0"));
  EXPECT_EQ(open.exit_code, 2) << open.err;
  EXPECT_THAT(open.err, HasSubstr("--insecure"));
}

TEST_F(Dashboard, ReportIsOneSelfContainedFile) {
  const std::string out = fleet_->dir() + "/report.html";
  const auto written =
      RunCommand(absl::StrCat(CliBinary(), " report --db ", db_path(),
                              " --job ", job_id_, " --out ", out));
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const std::string html = testing::ReadAll(out);
  // Chart.js and the data inline; nothing loaded from elsewhere.
  EXPECT_THAT(html, HasSubstr(std::string(dashboard::web::ChartJs())));
  EXPECT_THAT(html, HasSubstr("Chart.js v3"));
  EXPECT_THAT(html, HasSubstr("window.TUNEFLEET_REPORT = {"));
  EXPECT_THAT(html, HasSubstr(absl::StrCat("\"job_id\":", job_id_, ",")));
  EXPECT_THAT(html, HasSubstr("gemm M=32 N=32 K=32 fp32"));
  EXPECT_FALSE(std::regex_search(html, std::regex("<script[^>]*\\ssrc=")));
  EXPECT_FALSE(std::regex_search(html, std::regex("<link[^>]*href=")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"http")));
  // app.js and Chart.js may be inlined: neither closes a script element.
  EXPECT_THAT(std::string(dashboard::web::AppJs()), Not(HasSubstr("</")));
  EXPECT_THAT(std::string(dashboard::web::ChartJs()),
              Not(HasSubstr("</script")));

  if (!HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = DumpDom("file://" + out);
  const int points = DrawnChartPoints(dom);
  ASSERT_GE(points, 0) << dom.substr(0, 4000);
  EXPECT_EQ(points, kTrials);

  // An unknown job: NOT_FOUND, exit 2, no file.
  const auto unknown = RunCommand(absl::StrCat(CliBinary(), " report --db ",
                                               db_path(), " --job 999 --out ",
                                               fleet_->dir(), "/none.html"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(fleet_->dir() + "/none.html"));
}

TEST(DashboardTls, ServesHttpsWithTheServersCertificate) {
  const std::string dir = testing::FreshTempDir("tf_dashboard_tls");
  const auto certs = RunCommand(absl::StrCat(
      testing::SourceDir(), "/deploy/make-certs.sh ", dir, " 127.0.0.1"));
  ASSERT_EQ(certs.exit_code, 0) << certs.err;
  const std::string reader = *auth::GenerateToken();
  ASSERT_TRUE(auth::AppendTokenToFile(
                  dir + "/tokens.txt",
                  auth::TokenEntry::ForToken(reader, auth::Role::kReader, "r"))
                  .ok());
  // Plaintext on an address that is not loopback is refused.
  const auto refused = RunCommand(absl::StrCat(
      BinaryDir(), "/server/tunefleet-server --listen 127.0.0.1:0 --http ",
      "0.0.0.0:0 --db ", dir, "/tls.db --tokens ", dir, "/tokens.txt"));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("--http 0.0.0.0:0"));

  const int port = FreePort();
  Process server(
      {BinaryDir() + "/server/tunefleet-server", "--listen", "127.0.0.1:0",
       "--http", absl::StrCat("127.0.0.1:", port), "--db", dir + "/tls.db",
       "--tokens", dir + "/tokens.txt", "--tls-cert", dir + "/server.pem",
       "--tls-key", dir + "/server.key"},
      dir + "/server.log");
  auto get = [&](const std::string& token) {
    httplib::SSLClient client("127.0.0.1", port);
    client.set_ca_cert_path((dir + "/ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Get("/api/jobs", headers);
  };
  ASSERT_TRUE(FleetHarness::WaitFor([&] { return bool(get(reader)); },
                                    std::chrono::seconds(20)))
      << testing::ReadAll(dir + "/server.log");
  auto ok = get(reader);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "{\"jobs\":[]}");
  EXPECT_EQ(get("")->status, 401);
  // Plain HTTP gets no answer from the HTTPS port.
  EXPECT_FALSE(HttpGet(port, "/api/jobs", reader));
  server.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

// A model job as a DataSource would give it: two tasks, a latency history,
// trials with an error among them.
class FakeModelSource : public data_source::DataSource {
 public:
  FakeModelSource() {
    model_.set_job_id(10);
    model_.set_state(tunefleet::v1::JOB_STATE_RUNNING);
    model_.set_device_key("dash");
    model_.set_trials_done(3);
    model_.set_trials_total(8);
    (*model_.mutable_errors())["OK"] = 2;
    (*model_.mutable_errors())["COMPILE_ERROR"] = 1;
    auto* m = model_.mutable_model();
    m->set_model_name("tiny_mlp");
    m->set_latency_ns(2.5e6);
    m->set_naive_latency_ns(9e6);
    for (int i = 0; i < 2; ++i) {
      auto* task = m->add_task_progress();
      task->set_task_index(i);
      task->set_weight(1);
      task->set_trials_granted(4);
      task->mutable_job()->set_job_id(11 + i);
      task->mutable_job()->set_workload_key(
          absl::StrCat("gemm M=", 16 << i, " N=16 K=16 fp32"));
      task->mutable_job()->set_template_name("gemm_tiled");
    }
    for (int i = 1; i <= 3; ++i) {
      auto* point = m->add_latency_history();
      point->set_trials_done(i);
      point->set_latency_ns(4e6 - i * 5e5);
    }
    for (int i = 0; i < 3; ++i) {
      tunefleet::v1::TuningRecord r;
      r.set_trial_id(100 + i);
      r.set_job_id(11 + i % 2);
      r.set_error(i == 1 ? tunefleet::v1::Measurement::COMPILE_ERROR
                         : tunefleet::v1::Measurement::OK);
      r.set_time_ns(i == 1 ? 0 : 1e5 * (i + 1));
      r.set_gflops(i == 1 ? 0 : 3.0 / (i + 1));
      auto* knob = r.mutable_config()->add_knobs();
      knob->set_name("MWG");
      knob->set_value(16 << i);
      r.set_agent_name("agent-0");
      trials_.push_back(r);
    }
  }
  absl::StatusOr<data_source::FleetView> Fleet() override {
    return data_source::FleetView{};
  }
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t) override {
    return std::vector<tunefleet::v1::JobProgress>{model_};
  }
  absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t id) override {
    if (id != 10) return absl::NotFoundError("no such job");
    return model_;
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t id, int64_t after, int64_t limit) override {
    std::vector<tunefleet::v1::TuningRecord> out;
    for (const auto& t : trials_) {
      if (t.trial_id() > after && static_cast<int64_t>(out.size()) < limit) {
        out.push_back(t);
      }
    }
    return out;
  }
  bool CanCancel() const override { return false; }
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t) override {
    return absl::FailedPreconditionError("read-only");
  }

 private:
  tunefleet::v1::JobProgress model_;
  std::vector<tunefleet::v1::TuningRecord> trials_;
};

// A key whose agents brought a second driver: the fleet page lists its
// driver revisions (docs/DRIVER_DRIFT.md); a key with one driver adds no
// table.
TEST(DashboardFleet, ChromiumListsADriftedKeysDriverRevisions) {
  const std::string dir = testing::FreshTempDir("dashboard_drift");
  const std::string db = dir + "/drift.db";
  {
    auto store = store::Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    auto noted =
        testing::StoreDriftedDevice(**store, "mali-g610", {"r1p0", "r2p0-ota"});
    ASSERT_TRUE(noted.ok()) << noted.status();
  }
  const int port = FreePort();
  Process dashboard({CliBinary(), "dashboard", "--db", db, "--http",
                     absl::StrCat("127.0.0.1:", port)},
                    dir + "/dashboard.log");
  ASSERT_TRUE(FleetHarness::WaitFor(
      [port] {
        auto res = HttpGet(port, "/api/whoami", "");
        return res && res->status == 200;
      },
      std::chrono::seconds(20)))
      << testing::ReadAll(dir + "/dashboard.log");
  auto fleet = HttpGet(port, "/api/fleet", "");
  ASSERT_TRUE(fleet);
  const nlohmann::json f = nlohmann::json::parse(fleet->body);
  ASSERT_EQ(f["devices"].size(), 1u) << fleet->body;
  EXPECT_EQ(f["devices"][0]["driver_revisions"].size(), 2u) << fleet->body;

  if (!HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom =
      DumpDom(absl::StrCat("http://127.0.0.1:", port, "/#/fleet"));
  dashboard.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
  ASSERT_THAT(dom, HasSubstr("id=\"driver-revisions\"")) << dom.substr(0, 4000);
  const std::string table = dom.substr(dom.find("id=\"driver-revisions\""));
  EXPECT_THAT(table, HasSubstr("r1p0"));
  EXPECT_THAT(table, HasSubstr("r2p0-ota"));
  EXPECT_THAT(table, HasSubstr("mali-g610"));
}

TEST(DashboardReport, DrawsAModelJobsLatencyTasksAndErrors) {
  FakeModelSource source;
  dashboard::ReportOptions options;
  options.title = "model report";
  absl::StatusOr<std::string> html = dashboard::RenderReport(source, options);
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, HasSubstr("tiny_mlp"));
  EXPECT_THAT(*html, HasSubstr("\"config_text\":\"MWG=16\""));
  EXPECT_EQ(dashboard::RenderReport(source, {.job_id = 5}).status().code(),
            absl::StatusCode::kNotFound);

  if (!HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string path = ::testing::TempDir() + "/model_report_" +
                           std::to_string(getpid()) + ".html";
  std::ofstream(path) << *html;
  const std::string dom = DumpDom("file://" + path);
  std::filesystem::remove(path);
  for (const char* chart : {"trials-chart", "errors-chart", "latency-chart"}) {
    EXPECT_TRUE(std::regex_search(
        dom, std::regex(absl::StrCat("<canvas[^>]*class=\"", chart,
                                     "\"[^>]*data-rendered=\"true\""))))
        << chart << "\n"
        << dom.substr(0, 4000);
  }
  EXPECT_THAT(dom, HasSubstr("data-points=\"3\""));         // trials
  EXPECT_THAT(dom, HasSubstr("gemm M=32 N=16 K=16 fp32"));  // a task row
  EXPECT_THAT(dom, HasSubstr("model tiny_mlp"));
}

}  // namespace
}  // namespace tunefleet::testing
