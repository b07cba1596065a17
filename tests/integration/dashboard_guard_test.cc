// The web dashboard's protections against other sites and slow clients,
// with real processes (docs/SERVER_LIMITS.md, "HTTP protections"): a
// tunefleet-server with --no-auth --http (no token to stop anyone) and a
// job waiting for an agent; a request with a forged Host (DNS rebinding)
// gets 421 and no data; another site's form post cannot cancel the job,
// the page's own JSON call can; 20 slow connections without a token do
// not keep API calls from being answered; `tunefleet dashboard --db` says
// it listens on loopback only and applies the same checks.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/process.h"
#include "tests/support/webdriver.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGuardKey[] = "guard";

// A request to 127.0.0.1:`port` with these headers (Host included, which
// httplib then sends as given).
httplib::Result Call(int port, const std::string& method,
                     const std::string& path, const httplib::Headers& headers,
                     const std::string& body = "",
                     const std::string& content_type = "") {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(3, 0);
  client.set_read_timeout(3, 0);
  client.set_write_timeout(3, 0);
  if (method == "GET") return client.Get(path.c_str(), headers);
  return client.Post(path.c_str(), headers, body, content_type.c_str());
}

// A TCP connection to 127.0.0.1:`port` that sent `text` and stays open.
int OpenSlow(int port, const std::string& text) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  if (!text.empty()) (void)send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  return fd;
}

class DashboardGuard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fleet_ = std::make_unique<FleetHarness>("dashboard_guard");
    http_port_ = FreePort();
    ASSERT_TRUE(fleet_->StartServer(
        {"--no-auth", "--http", absl::StrCat("127.0.0.1:", http_port_)}))
        << testing::ReadAll(fleet_->dir() + "/server.log");
    // The device key becomes known; then the agent goes, and the job
    // waits (running) for one.
    ASSERT_TRUE(fleet_->StartAgents(1, kGuardKey));
    fleet_->agent(0).Kill(SIGTERM);
    ASSERT_TRUE(
        FleetHarness::WaitFor([] { return fleet_->Connected(kGuardKey) == 0; },
                              std::chrono::seconds(30)));
    job_id_ = fleet_->Submit(testing::SmallGemmJob(kGuardKey, 10, 0, 1));
    ASSERT_GT(job_id_, 0);
  }
  static void TearDownTestSuite() { fleet_.reset(); }

  static std::string Host() { return absl::StrCat("127.0.0.1:", http_port_); }
  static std::string JobPath() { return absl::StrCat("/api/jobs/", job_id_); }
  // The job's state as the API shows it ("" when it does not answer).
  static std::string JobState(int64_t job = job_id_) {
    auto res = Call(http_port_, "GET", absl::StrCat("/api/jobs/", job),
                    {{"Host", Host()}});
    if (!res || res->status != 200) return "";
    return nlohmann::json::parse(res->body)["job"]["state"];
  }
  // True once `job` has left the queue (its first step ran; it then waits
  // for an agent).
  static bool WaitRunning(int64_t job) {
    return FleetHarness::WaitFor(
        [job] { return JobState(job) == "JOB_STATE_RUNNING"; },
        std::chrono::seconds(30));
  }

  // The start of a browser test: skips it where chromium or chromedriver
  // is not installed (*job stays 0), else submits a new job of kGuardKey
  // (random-search seed `seed`) into *job, which must be accepted.
  static void SubmitForBrowser(uint64_t seed, int64_t* job) {
    *job = 0;
    if (!testing::HaveWebDriver()) {
      GTEST_SKIP() << "chromium or chromedriver is not installed";
    }
    *job = fleet_->Submit(testing::SmallGemmJob(kGuardKey, 10, 0, seed));
    ASSERT_GT(*job, 0);
  }

  static inline std::unique_ptr<FleetHarness> fleet_;
  static inline int http_port_ = 0;
  static inline int64_t job_id_ = 0;
};

TEST_F(DashboardGuard, AForgedHostGets421AndNoData) {
  for (const std::string& host :
       {absl::StrCat("evil.example:", http_port_), std::string("evil.example"),
        absl::StrCat("127.0.0.1.evil.example:", http_port_)}) {
    auto res = Call(http_port_, "GET", "/api/jobs", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 421) << host;
    EXPECT_THAT(res->body, Not(HasSubstr("gemm"))) << host;
    EXPECT_THAT(res->body, HasSubstr("--http-host"));
  }
  // The page too.
  auto page = Call(http_port_, "GET", "/", {{"Host", "evil.example"}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 421);
  // The names it has: its address, and loopback names on loopback.
  for (const std::string& host :
       {Host(), absl::StrCat("localhost:", http_port_),
        absl::StrCat("[::1]:", http_port_)}) {
    auto res = Call(http_port_, "GET", "/api/jobs", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 200) << host;
    EXPECT_THAT(res->body, HasSubstr("gemm M=40 N=24 K=32")) << host;
  }
}

TEST_F(DashboardGuard, AnotherSitesFormPostCannotCancelTheJob) {
  ASSERT_TRUE(WaitRunning(job_id_)) << JobState();
  const std::string cancel = absl::StrCat(JobPath(), "/cancel");
  // What a form on another site posts (the three content types a form or
  // a "simple" fetch can send), with what the browser adds.
  for (const std::string& type :
       {std::string("application/x-www-form-urlencoded"),
        std::string("multipart/form-data; boundary=x"),
        std::string("text/plain")}) {
    auto res = Call(http_port_, "POST", cancel,
                    {{"Host", Host()},
                     {"Origin", "http://evil.example"},
                     {"Sec-Fetch-Site", "cross-site"}},
                    "x=1", type);
    ASSERT_TRUE(res) << type;
    EXPECT_EQ(res->status, 415) << type << ": " << res->body;
  }
  // JSON from another origin (a fetch that skipped the preflight) too.
  auto json = Call(http_port_, "POST", cancel,
                   {{"Host", Host()}, {"Origin", "http://evil.example"}}, "{}",
                   "application/json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 403) << json->body;
  auto site = Call(http_port_, "POST", cancel,
                   {{"Host", Host()}, {"Sec-Fetch-Site", "same-site"}}, "{}",
                   "application/json");
  ASSERT_TRUE(site);
  EXPECT_EQ(site->status, 403) << site->body;
  EXPECT_EQ(JobState(), "JOB_STATE_RUNNING");

  // The dashboard's own page cancels.
  auto own = Call(http_port_, "POST", cancel,
                  {{"Host", Host()},
                   {"Origin", absl::StrCat("http://", Host())},
                   {"Sec-Fetch-Site", "same-origin"}},
                  "{}", "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  EXPECT_EQ(JobState(), "JOB_STATE_CANCELLED");
}

// The attack as a browser makes it: a page of another origin (another
// port of localhost here) whose form posts to the dashboard's cancel when
// it loads. The job stays running.
TEST_F(DashboardGuard, ChromiumOnAnotherSitesPageCannotCancel) {
  int64_t job = 0;
  SubmitForBrowser(2, &job);
  if (job <= 0) return;  // skipped, or refused (a failure)
  ASSERT_TRUE(WaitRunning(job)) << JobState(job);
  const std::string cancel = absl::StrCat("http://127.0.0.1:", http_port_,
                                          "/api/jobs/", job, "/cancel");
  httplib::Server evil;
  evil.Get("/", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        absl::StrCat("<html><body><form method=\"POST\" action=\"", cancel,
                     "\" enctype=\"text/plain\"><input name='{\"a\":\"' "
                     "value='\"}'></form><script>document.forms[0].submit();"
                     "</script></body></html>"),
        "text/html");
  });
  const int evil_port = evil.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { evil.listen_after_bind(); });
  {
    testing::WebDriver browser(fleet_->dir() + "/chromedriver.log");
    ASSERT_TRUE(browser.ok())
        << testing::ReadAll(fleet_->dir() + "/chromedriver.log");
    browser.Navigate(absl::StrCat("http://localhost:", evil_port, "/"));
    // The form was sent once the browser shows the dashboard's answer.
    EXPECT_TRUE(FleetHarness::WaitFor(
        [&] { return browser.Url().find("/cancel") != std::string::npos; },
        std::chrono::seconds(20)))
        << browser.Url();
    EXPECT_THAT(browser.Source(), HasSubstr("application/json"));
  }
  evil.stop();
  serving.join();
  auto res = Call(http_port_, "GET", absl::StrCat("/api/jobs/", job),
                  {{"Host", Host()}});
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body)["job"]["state"],
            "JOB_STATE_RUNNING");
}

// The other side of the same checks: the dashboard's own page, in the
// browser, still cancels (its fetch sends JSON from its own origin).
TEST_F(DashboardGuard, ChromiumOnTheDashboardsOwnPageCancels) {
  int64_t job = 0;
  SubmitForBrowser(3, &job);
  if (job <= 0) return;  // skipped, or refused (a failure)
  const std::string button =
      absl::StrCat("tr[data-job-id=\"", job, "\"] button.cancel");
  {
    testing::WebDriver browser(fleet_->dir() + "/chromedriver_own.log");
    ASSERT_TRUE(browser.ok())
        << testing::ReadAll(fleet_->dir() + "/chromedriver_own.log");
    browser.Navigate(absl::StrCat("http://", Host(), "/#/jobs"));
    const std::string cancel =
        browser.WaitFind(button, std::chrono::seconds(20));
    ASSERT_FALSE(cancel.empty()) << browser.Source().substr(0, 4000);
    browser.Run("window.confirm = () => true; return null;");
    browser.Click(cancel);
    EXPECT_TRUE(FleetHarness::WaitFor(
        [&] {
          auto res = Call(http_port_, "GET", absl::StrCat("/api/jobs/", job),
                          {{"Host", Host()}});
          return res && res->status == 200 &&
                 nlohmann::json::parse(res->body)["job"]["state"] ==
                     "JOB_STATE_CANCELLED";
        },
        std::chrono::seconds(20)))
        << browser.Source().substr(0, 4000);
  }
}

TEST_F(DashboardGuard, SlowClientsWithoutATokenDoNotStallTheApi) {
  // 20 connections: half send nothing, half a request's first line and
  // then a header byte every 500 ms, never finishing.
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    const int fd = OpenSlow(
        http_port_,
        i % 2 == 0 ? std::string()
                   : absl::StrCat("GET /api/jobs HTTP/1.1\r\nHost: ", Host(),
                                  "\r\nX-Slow: "));
    ASSERT_GE(fd, 0);
    slow.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load()) {
      for (size_t i = 1; i < slow.size(); i += 2) {
        (void)send(slow[i], "a", 1, MSG_NOSIGNAL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  // Calls keep being answered, each within its 3 s timeouts.
  int answered = 0;
  for (int i = 0; i < 10; ++i) {
    auto res = Call(http_port_, "GET", "/api/jobs", {{"Host", Host()}});
    if (res && res->status == 200) ++answered;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  stop = true;
  trickle.join();
  for (int fd : slow) close(fd);
  EXPECT_EQ(answered, 10);
}

TEST_F(DashboardGuard, DashboardCommandListensOnLoopbackAndChecksTheSame) {
  const int port = FreePort();
  testing::Process dashboard(
      {testing::CliBinary(), "dashboard", "--db", fleet_->db_path(), "--http",
       absl::StrCat("127.0.0.1:", port)},
      fleet_->dir() + "/dashboard.log");
  const std::string host = absl::StrCat("127.0.0.1:", port);
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto res = Call(port, "GET", "/api/whoami", {{"Host", host}});
        return res && res->status == 200;
      },
      std::chrono::seconds(20)))
      << testing::ReadAll(fleet_->dir() + "/dashboard.log");
  EXPECT_THAT(testing::ReadAll(fleet_->dir() + "/dashboard.log"),
              HasSubstr("loopback only"));
  auto forged = Call(port, "GET", "/api/jobs", {{"Host", "evil.example"}});
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 421);
  auto form = Call(port, "POST", absl::StrCat(JobPath(), "/cancel"),
                   {{"Host", host}, {"Origin", "http://evil.example"}}, "x=1",
                   "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  dashboard.Kill(SIGTERM);
}

}  // namespace
}  // namespace tunefleet::testing
