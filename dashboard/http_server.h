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
// {"error": "...", "code": "UNAUTHENTICATED"} (proto::ErrorJson). The page and
// its assets hold no data and load without a token. Live updates: the page
// polls the API (app.js).
#ifndef TUNEFLEET_DASHBOARD_HTTP_SERVER_H_
#define TUNEFLEET_DASHBOARD_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dashboard/data_source.h"
#include "server/auth/tokens.h"

namespace httplib {
class Server;
}

namespace tunefleet::dashboard {

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
};

// Serves on its own thread from Start() until Stop() (or destruction).
// Thread-safe.
class HttpServer {
 public:
  // `source` must outlive the server. Errors: INVALID_ARGUMENT for a bad
  // listen address or TLS files that do not load; UNAVAILABLE when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, DataSource* source);
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

 private:
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Start().
  HttpServer(PrivateTag, HttpOptions options, DataSource* source);

 private:
  // Registers the pages, API and /metrics on server_.
  void AddRoutes();
  std::shared_ptr<const auth::TokenSet> tokens() const;

  HttpOptions options_;
  DataSource* source_;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const auth::TokenSet> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_HTTP_SERVER_H_
