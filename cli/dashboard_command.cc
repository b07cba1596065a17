#include "cli/dashboard_command.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "auth/tls.h"
#include "auth/tokens.h"
#include "base/host_port.h"
#include "base/listen_check.h"
#include "cli/common.h"
#include "cli/server_source.h"
#include "dashboard/http_server.h"

namespace tunefleet::cli {
namespace {

// The HTTP options, or FAILED_PRECONDITION for an address the flags do not
// allow: a non-loopback one needs --tokens and TLS, or --insecure.
absl::StatusOr<dashboard::HttpOptions> HttpOptionsOf(
    const DashboardOptions& options) {
  dashboard::HttpOptions http;
  http.listen = options.http;
  http.tls_cert_file = options.tls_cert;
  http.tls_key_file = options.tls_key;
  http.title = absl::StrCat("tunefleet dashboard: ", options.db);
  http.hosts = options.hosts;
  if (!options.tokens_file.empty()) {
    absl::StatusOr<auth::TokenSet> tokens =
        auth::TokenSet::Load(options.tokens_file);
    if (!tokens.ok()) return tokens.status();
    http.tokens = std::make_shared<const auth::TokenSet>(*std::move(tokens));
  }
  if (!auth::IsLoopbackAddress(options.http) && !options.insecure &&
      (http.tokens == nullptr || options.tls_cert.empty())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--http ", options.http,
        " is not a loopback address: pass --tokens FILE and --tls-cert/"
        "--tls-key, or --insecure to serve it anyway"));
  }
  return http;
}

}  // namespace

void AddDashboardOptions(CLI::App* cmd, DashboardOptions& options) {
  AddDbOption(cmd, options.db, "SQLite database file");
  cmd->add_option("--http", options.http,
                  "HOST:PORT to serve on (port 0: any free port); the "
                  "default is loopback only, this machine's browsers")
      ->capture_default_str();
  cmd->add_option("--http-host", options.hosts,
                  "a host name the page is reached by besides the --http "
                  "address (repeat for more); requests naming another Host "
                  "are refused (421), against DNS rebinding");
  cmd->add_option("--tokens", options.tokens_file,
                  "require a token of role reader or tuner from this tokens "
                  "file (tunefleet token add); default: no token on a "
                  "loopback address");
  cmd->add_option("--tls-cert", options.tls_cert,
                  "HTTPS: the certificate chain (PEM)");
  cmd->add_option("--tls-key", options.tls_key,
                  "HTTPS: the private key of --tls-cert (PEM)");
  cmd->add_flag("--insecure", options.insecure,
                "allow an address that is not loopback without --tokens and "
                "TLS");
}

int RunDashboard(const DashboardOptions& options) {
  absl::StatusOr<dashboard::HttpOptions> http = HttpOptionsOf(options);
  if (!http.ok()) {
    ReportError("dashboard", http.status());
    return kExitBadInput;
  }
  // The port before the database: a port in use opens nothing.
  absl::StatusOr<base::HostPort> listen =
      base::ParseHostPort(http->listen, "--http", /*allow_port_zero=*/true);
  absl::Status free =
      listen.ok() ? base::CheckCanListen(*listen, "--http") : listen.status();
  if (!free.ok()) return ReportError("dashboard", free);
  absl::StatusOr<std::unique_ptr<data_source::DataSource>> source =
      OpenDatabaseSource(options.db);
  if (!source.ok()) return ReportError("dashboard", source.status());
  // SIGINT and SIGTERM are waited for below; blocked before the server's
  // thread starts, so that it inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  absl::StatusOr<std::unique_ptr<dashboard::HttpServer>> server =
      dashboard::HttpServer::Start(*http, source->get());
  if (!server.ok()) return ReportError("dashboard", server.status());
  std::fprintf(stderr,
               "tunefleet dashboard: %s://%s/ (database %s, read-only; "
               "%s); Ctrl-C stops\n",
               (*server)->tls() ? "https" : "http",
               (*server)->address().c_str(), options.db.c_str(),
               http->tokens ? "token required" : "no token");
  if (auth::IsLoopbackAddress(options.http)) {
    std::fprintf(stderr,
                 "tunefleet dashboard: listening on loopback only: browsers "
                 "on other machines cannot connect (--http HOST:PORT with "
                 "--tokens and --tls-cert/--tls-key to serve them)\n");
  }
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
  return kExitOk;
}

}  // namespace tunefleet::cli
