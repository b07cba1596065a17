// A headless Chromium driven through chromedriver's W3C WebDriver API
// (Debian's chromium-driver), for browser tests that need more than
// --dump-dom: typing into a form, reading sessionStorage and the address
// bar. Plain HTTP with cpp-httplib and nlohmann-json; no client library.
#ifndef TUNEFLEET_TESTS_SUPPORT_WEBDRIVER_H_
#define TUNEFLEET_TESTS_SUPPORT_WEBDRIVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/process.h"

namespace tunefleet::testing {

// True when chromium and chromedriver are installed.
inline bool HaveWebDriver() {
  return RunCommand("command -v chromium && command -v chromedriver")
             .exit_code == 0;
}

// One browser session; the chromedriver process ends with it. Not
// thread-safe.
class WebDriver {
 public:
  // Starts chromedriver (log in `log_path`) and a headless session; ok()
  // says whether both came up.
  explicit WebDriver(const std::string& log_path) : port_(FreePort()) {
    driver_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/bin/chromedriver",
                                 absl::StrCat("--port=", port_)},
        log_path);
    const bool up = FleetHarness::WaitFor(
        [this] {
          auto res = Client().Get("/status");
          return res && res->status == 200;
        },
        std::chrono::seconds(20));
    if (!up) return;
    const nlohmann::json caps = {
        {"capabilities",
         {{"alwaysMatch",
           {{"browserName", "chrome"},
            {"goog:chromeOptions",
             {{"binary", "/usr/bin/chromium"},
              {"args",
               {"--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--window-size=1280,900"}}}}}}}}};
    std::optional<nlohmann::json> session = Post("/session", caps);
    if (session && (*session)["value"].contains("sessionId")) {
      session_ = (*session)["value"]["sessionId"];
    }
  }
  ~WebDriver() {
    if (!session_.empty()) Client().Delete(Path("").c_str());
    driver_->Kill(SIGTERM);
  }

  bool ok() const { return !session_.empty(); }

  void Navigate(const std::string& url) { Post(Path("/url"), {{"url", url}}); }
  // The element matching CSS `selector`'s WebDriver id, or "".
  std::string Find(const std::string& selector) {
    std::optional<nlohmann::json> r = Post(
        Path("/element"), {{"using", "css selector"}, {"value", selector}});
    if (!r || !(*r)["value"].is_object()) return "";
    for (const auto& [key, value] : (*r)["value"].items()) {
      if (key.rfind("element-", 0) == 0) return value;
    }
    return "";
  }
  // Waits up to `limit` for an element matching `selector`; its id or "".
  std::string WaitFind(const std::string& selector,
                       std::chrono::milliseconds limit) {
    std::string id;
    FleetHarness::WaitFor(
        [&] {
          id = Find(selector);
          return !id.empty();
        },
        limit);
    return id;
  }
  void Type(const std::string& element, const std::string& text) {
    Post(Path(absl::StrCat("/element/", element, "/value")), {{"text", text}});
  }
  void Click(const std::string& element) {
    Post(Path(absl::StrCat("/element/", element, "/click")),
         nlohmann::json::object());
  }
  // Runs `script` (a function body; `return` gives the value) in the page.
  nlohmann::json Run(const std::string& script) {
    std::optional<nlohmann::json> r =
        Post(Path("/execute/sync"),
             {{"script", script}, {"args", nlohmann::json::array()}});
    return r ? (*r)["value"] : nlohmann::json();
  }
  std::string Source() {
    auto res = Client().Get(Path("/source").c_str());
    if (!res || res->status != 200) return "";
    return nlohmann::json::parse(res->body)["value"];
  }
  std::string Url() { return Run("return location.href;"); }

 private:
  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    return client;
  }
  std::string Path(const std::string& rest) const {
    return absl::StrCat("/session/", session_, rest);
  }
  std::optional<nlohmann::json> Post(const std::string& path,
                                     const nlohmann::json& body) {
    auto res = Client().Post(path.c_str(), body.dump(), "application/json");
    if (!res) return std::nullopt;
    return nlohmann::json::parse(res->body, nullptr, false);
  }

  int port_;
  std::unique_ptr<Process> driver_;
  std::string session_;
};

// Starts a browser session logging to `log_path` into *browser. Skips
// the test when chromium or chromedriver is not installed and fails it
// when they do not start, leaving *browser null: the caller then returns.
inline void StartWebDriver(const std::string& log_path,
                           std::unique_ptr<WebDriver>* browser) {
  browser->reset();
  if (!HaveWebDriver()) {
    GTEST_SKIP() << "chromium or chromedriver is not installed";
  }
  auto started = std::make_unique<WebDriver>(log_path);
  ASSERT_TRUE(started->ok()) << ReadAll(log_path);
  *browser = std::move(started);
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_WEBDRIVER_H_
