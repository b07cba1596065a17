// The web dashboard's HTTP server (cpp-httplib): the pages (one page and
// its script, dashboard/web/), Chart.js, and a JSON API over a DataSource:
//   GET  /api/whoami                      {role, can_cancel, live, title}
//   GET  /api/fleet                       FleetJson
//   GET  /api/jobs?limit=N                JobsJson (N <= 1000; default 200)
//   GET  /api/jobs/ID                     {job: ProgressJson}
//   GET  /api/jobs/ID/trials?after=T&limit=N
//                                          TrialsJson, trial ids above T,
//                                          N <= 10000 (default 5000)
//   POST /api/jobs/ID/cancel              {job: ProgressJson}; role tuner
//   GET  /metrics                         metrics_text(), when set
// Every /api/ call and /metrics needs a bearer token of role reader or
// above (dashboard/token_check.h); without one: 401 and a body of only
// {"error": "...", "code": "UNAUTHENTICATED"} (contract::ErrorJson). The page
// and its assets hold no data and load without a token, which the page asks
// for (a form; kept in the tab's sessionStorage) and sends as a header: a
// token is never read from the URL. Live updates: the page polls the API
// (app.js).
// Before any of that, every request's Host must name the dashboard (421
// otherwise) and a POST must be JSON from the dashboard's own origin (415,
// 403) (request_guard.h); connections are served under deadlines
// (bounded_server.h). docs/SERVER_LIMITS.md has the details.
#ifndef TUNEFLEET_DASHBOARD_HTTP_SERVER_H_
#define TUNEFLEET_DASHBOARD_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "auth/tokens.h"
#include "dashboard/connection_limits.h"
#include "dashboard/request_guard.h"
#include "data_source/data_source.h"

namespace httplib {
class Server;
}

namespace tunefleet::dashboard {

class BoundedServer;

struct HttpOptions {
  // HOST:PORT to listen on; port 0: any free port. Which addresses are
  // allowed (loopback, TLS, --insecure) is the caller's rule to check.
  std::string listen = "127.0.0.1:0";
  // The accepted tokens; null: no authentication (every caller is a
  // tuner).
  std::shared_ptr<const auth::TokenSet> tokens;
  // TLS (PEM files): HTTPS when tls_cert_file is set; with
  // tls_client_ca_file, clients must present a certificate it signed.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Prometheus text served at GET /metrics (content type "text/plain;
  // version=0.0.4"); not served when empty.
  std::function<std::string()> metrics_text;
  // Shown in the page's header: what is being looked at.
  std::string title = "tunefleet";
  // Names (or addresses) besides the listen address that requests may
  // carry as their Host (a reverse proxy's, a DNS name); "*": any.
  std::vector<std::string> hosts;
  // Threads, connections and deadlines of the connections.
  ConnectionLimits connections;
};

// Serves on its own thread from Start() until Stop() (or destruction).
// Thread-safe.
class HttpServer {
 public:
  // `source` must outlive the server. Errors: INVALID_ARGUMENT for a bad
  // listen address or TLS files that do not load; UNAVAILABLE when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, data_source::DataSource* source);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // "HOST:PORT" as bound (0.0.0.0 shown as 127.0.0.1, to dial).
  std::string address() const;
  bool tls() const { return !options_.tls_cert_file.empty(); }

  // Replaces the accepted tokens (a reloaded tokens file). Ignored when
  // started without tokens.
  void SetTokens(std::shared_ptr<const auth::TokenSet> tokens);
  // Stops listening and joins the serving thread; idempotent.
  void Stop();

  // Serves `raw` (one or more requests as a client sends them) and returns
  // the answers, without a socket; for a server made by ForTest().
  std::string ServeForTest(absl::string_view raw);
  // A plain-HTTP server with `options`' routes and checks that does not
  // listen (for ServeForTest). Errors: INVALID_ARGUMENT for a bad listen
  // address.
  static absl::StatusOr<std::unique_ptr<HttpServer>> ForTest(
      const HttpOptions& options, data_source::DataSource* source);

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Start().
  HttpServer(PrivateTag, HttpOptions options, data_source::DataSource* source);

 private:
  // Makes server_ (plain or TLS) with its routes, not listening.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Make(
      const HttpOptions& options, data_source::DataSource* source);
  // Registers the checks (request_guard.h), pages, API and /metrics.
  void AddRoutes();
  std::shared_ptr<const auth::TokenSet> tokens() const;

  HttpOptions options_;
  data_source::DataSource* source_;
  std::string host_;
  int port_ = 0;
  HostRule host_rule_;
  std::unique_ptr<httplib::Server> server_;
  BoundedServer* bounded_ = nullptr;  // server_, when plain HTTP
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const auth::TokenSet> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_HTTP_SERVER_H_
