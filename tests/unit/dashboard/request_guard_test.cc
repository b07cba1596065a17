// The Host check against DNS rebinding, the checks of state changes
// against other sites' pages (dashboard/request_guard.h), and both as the
// server applies them before routing (HttpServer::ServeForTest).
#include "dashboard/request_guard.h"

#include <memory>
#include <string>

#include "dashboard/http_server.h"
#include "data_source/data_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(HostOfHeader, TakesTheHostPartOfEveryForm) {
  EXPECT_EQ(HostOfHeader("127.0.0.1:8080"), "127.0.0.1");
  EXPECT_EQ(HostOfHeader("Dash.Example."), "dash.example");
  EXPECT_EQ(HostOfHeader("[::1]:8080"), "::1");
  EXPECT_EQ(HostOfHeader("[::1]"), "::1");
  EXPECT_EQ(HostOfHeader(" localhost "), "localhost");
  for (const char* bad : {"", ":80", "a b", "host:x", "host:99999", "[::1",
                          "[zz]:1", "[::1]x", "evil.example/x", "a:1:2"}) {
    EXPECT_EQ(HostOfHeader(bad), std::nullopt) << bad;
  }
}

TEST(CheckHost, AllowsTheListenAddressAndLoopbackNamesOnLoopback) {
  const HostRule loopback{"127.0.0.1", {}};
  for (const char* ok : {"127.0.0.1:8080", "localhost:8080", "[::1]:8080",
                         "127.0.0.2", "LOCALHOST"}) {
    EXPECT_EQ(CheckHost(ok, loopback), std::nullopt) << ok;
  }
  for (const char* bad : {"evil.example", "evil.example:8080",
                          "127.0.0.1.evil.example", "10.0.0.5:8080"}) {
    const std::optional<Refusal> r = CheckHost(bad, loopback);
    ASSERT_TRUE(r.has_value()) << bad;
    EXPECT_EQ(r->status, 421) << bad;
    EXPECT_THAT(r->message, HasSubstr("--http-host"));
  }
  EXPECT_EQ(CheckHost("", loopback)->status, 400);
  EXPECT_EQ(CheckHost("a b", loopback)->status, 400);
}

TEST(CheckHost, AllowsAddressesOnAWildcardAndGivenNames) {
  const HostRule any{"0.0.0.0", {"dash.example"}};
  EXPECT_EQ(CheckHost("192.168.1.20:8080", any), std::nullopt);
  EXPECT_EQ(CheckHost("[fe80::1]:8080", any), std::nullopt);
  EXPECT_EQ(CheckHost("dash.example:8080", any), std::nullopt);
  EXPECT_EQ(CheckHost("DASH.example", any), std::nullopt);
  EXPECT_EQ(CheckHost("other.example", any)->status, 421);
  const HostRule named{"dash.example", {}};
  EXPECT_EQ(CheckHost("dash.example:443", named), std::nullopt);
  EXPECT_EQ(CheckHost("127.0.0.1", named)->status, 421);
  EXPECT_EQ(CheckHost("evil.example", HostRule{"127.0.0.1", {"*"}}),
            std::nullopt);
}

TEST(CheckStateChange, TakesOnlyJsonFromTheSameOrigin) {
  const char* host = "127.0.0.1:8080";
  EXPECT_EQ(CheckStateChange("GET", "", "http://evil.example", "cross-site",
                             host, false),
            std::nullopt);
  EXPECT_EQ(CheckStateChange("POST", "application/json", "", "", host, false),
            std::nullopt);
  EXPECT_EQ(
      CheckStateChange("POST", "application/json; charset=utf-8",
                       "http://127.0.0.1:8080", "same-origin", host, false),
      std::nullopt);
  for (const char* type :
       {"", "text/plain", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonx"}) {
    EXPECT_EQ(CheckStateChange("POST", type, "", "", host, false)->status, 415)
        << type;
  }
  EXPECT_EQ(CheckStateChange("POST", "application/json", "http://evil.example",
                             "", host, false)
                ->status,
            403);
  EXPECT_EQ(
      CheckStateChange("POST", "application/json", "null", "", host, false)
          ->status,
      403);
  // The right host under the other scheme is another origin.
  EXPECT_EQ(CheckStateChange("POST", "application/json",
                             "https://127.0.0.1:8080", "", host, false)
                ->status,
            403);
  for (const char* site : {"cross-site", "same-site"}) {
    EXPECT_EQ(
        CheckStateChange("DELETE", "application/json", "", site, host, false)
            ->status,
        403)
        << site;
  }
}

class Empty final : public data_source::DataSource {
 public:
  absl::StatusOr<data_source::FleetView> Fleet() override {
    return data_source::FleetView{};
  }
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t) override {
    tunefleet::v1::JobProgress p;
    p.set_job_id(3);
    p.set_workload_key("gemm M=8 N=8 K=8 fp32");
    return std::vector<tunefleet::v1::JobProgress>{p};
  }
  absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t) override {
    return absl::NotFoundError("no such job");
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t, int64_t, int64_t) override {
    return std::vector<tunefleet::v1::TuningRecord>{};
  }
  bool CanCancel() const override { return true; }
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t) override {
    cancelled = true;
    return tunefleet::v1::JobProgress();
  }
  bool cancelled = false;
};

TEST(HttpServerChecks, AreAppliedBeforeRouting) {
  Empty source;
  HttpOptions options;
  options.listen = "127.0.0.1:8080";
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::ForTest(options, &source);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->ServeForTest(
                  "GET /api/jobs HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
              StartsWith("HTTP/1.1 421"));
  const std::string ok = (*server)->ServeForTest(
      "GET /api/jobs HTTP/1.1\r\nHost: localhost:8080\r\n\r\n");
  EXPECT_THAT(ok, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(ok, HasSubstr("gemm M=8 N=8 K=8"));
  EXPECT_THAT((*server)->ServeForTest(
                  "POST /api/jobs/3/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nx=1"),
              StartsWith("HTTP/1.1 415"));
  EXPECT_FALSE(source.cancelled);
  EXPECT_THAT((*server)->ServeForTest(
                  "POST /api/jobs/3/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Content-Type: application/json\r\nContent-Length: 2\r\n"
                  "\r\n{}"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_TRUE(source.cancelled);
  // Two requests on one connection: both answered.
  const std::string two = (*server)->ServeForTest(
      "GET /api/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
      "GET /api/fleet HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(two.find("HTTP/1.1 200"), 0u);
  EXPECT_NE(two.find("HTTP/1.1 200", 1), std::string::npos);
}

}  // namespace
}  // namespace tunefleet::dashboard
