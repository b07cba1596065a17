#include "dashboard/http_server.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/host_port.h"
#include "base/listen_check.h"
#include "base/status_macros.h"
#include "contract/json.h"
#include "dashboard/bounded_server.h"
#include "dashboard/json_views.h"
#include "dashboard/token_check.h"
#include "dashboard/web_assets.h"
#include "httplib.h"

namespace tunefleet::dashboard {
namespace {

constexpr char kJson[] = "application/json";
constexpr int64_t kDefaultJobs = 200;
constexpr int64_t kMaxJobs = 1000;
constexpr int64_t kDefaultTrials = 5000;
constexpr int64_t kMaxTrials = 10000;

int HttpStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    default:
      return 500;
  }
}

// An error answer: the status's HTTP code and only contract::ErrorJson
// ({"error": message, "code": "NOT_FOUND"}), as the CLI's --json errors.
void SetError(const absl::Status& status, httplib::Response& res) {
  res.status = HttpStatus(status);
  if (res.status == 401) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"tunefleet\"");
  }
  res.set_content(contract::ErrorJson(status).dump(), kJson);
}

void SetJson(const nlohmann::json& body, httplib::Response& res) {
  res.set_content(
      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      kJson);
}

// The query parameter `name` as an integer in [0, max], or `fallback`
// when absent. INVALID_ARGUMENT otherwise.
absl::StatusOr<int64_t> IntParam(const httplib::Request& req,
                                 const std::string& name, int64_t fallback,
                                 int64_t max) {
  if (!req.has_param(name.c_str())) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(req.get_param_value(name.c_str()), &value) ||
      value < 0 || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be an integer from 0 to ", max));
  }
  return value;
}

absl::StatusOr<int64_t> JobIdOf(const httplib::Request& req) {
  int64_t id = 0;
  if (req.matches.size() < 2 || !absl::SimpleAtoi(req.matches[1].str(), &id) ||
      id <= 0) {
    return absl::InvalidArgumentError("the job id must be a positive integer");
  }
  return id;
}

}  // namespace

HttpServer::HttpServer(PrivateTag, HttpOptions options,
                       data_source::DataSource* source)
    : options_(std::move(options)), source_(source), tokens_(options_.tokens) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Make(
    const HttpOptions& options, data_source::DataSource* source) {
  TUNEFLEET_ASSIGN_OR_RETURN(
      base::HostPort listen,
      base::ParseHostPort(options.listen, "--http", /*allow_port_zero=*/true));
  auto s = std::make_unique<HttpServer>(PrivateTag{}, options, source);
  s->host_ = listen.host;
  s->host_rule_ = HostRule{listen.host, options.hosts};
  if (options.tls_cert_file.empty()) {
    auto plain = std::make_unique<BoundedServer>(options.connections);
    s->bounded_ = plain.get();
    s->server_ = std::move(plain);
  } else {
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str(),
        options.tls_client_ca_file.empty()
            ? nullptr
            : options.tls_client_ca_file.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--http: cannot load the TLS certificate ", options.tls_cert_file,
          " and key ", options.tls_key_file));
    }
    ApplyLimits(options.connections, *ssl);
    s->server_ = std::move(ssl);
  }
  s->AddRoutes();
  return s;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::ForTest(
    const HttpOptions& options, data_source::DataSource* source) {
  HttpOptions plain = options;
  plain.tls_cert_file.clear();
  return Make(plain, source);
}

std::string HttpServer::ServeForTest(absl::string_view raw) {
  return bounded_ != nullptr ? bounded_->ServeForTest(raw) : std::string();
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpOptions& options, data_source::DataSource* source) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> s,
                             Make(options, source));
  TUNEFLEET_ASSIGN_OR_RETURN(
      base::HostPort listen,
      base::ParseHostPort(options.listen, "--http", /*allow_port_zero=*/true));
  if (listen.port == 0) {
    s->port_ = s->server_->bind_to_any_port(listen.host);
  } else if (s->server_->bind_to_port(listen.host, listen.port)) {
    s->port_ = listen.port;
  }
  if (s->port_ <= 0) return base::ListenError(options.listen, "--http");
  s->thread_ =
      std::thread([server = s->server_.get()] { server->listen_after_bind(); });
  return s;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string HttpServer::address() const {
  std::string host = host_;
  if (host.empty() || host == "0.0.0.0" || host == "::") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = absl::StrCat("[", host, "]");
  return absl::StrCat(host, ":", port_);
}

void HttpServer::SetTokens(std::shared_ptr<const auth::TokenSet> tokens) {
  absl::MutexLock lock(&mu_);
  if (tokens_ != nullptr) tokens_ = std::move(tokens);
}

std::shared_ptr<const auth::TokenSet> HttpServer::tokens() const {
  absl::MutexLock lock(&mu_);
  return tokens_;
}

void HttpServer::AddRoutes() {
  httplib::Server& srv = *server_;
  // cpp-httplib's default sets SO_REUSEPORT, which lets a second process
  // listen on a port in use (requests then go to either): SO_REUSEADDR
  // only, so that a port in use is refused.
  srv.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  srv.set_default_headers({{"Cache-Control", "no-store"},
                           {"X-Content-Type-Options", "nosniff"},
                           {"X-Frame-Options", "DENY"},
                           {"Referrer-Policy", "no-referrer"}});
  srv.set_payload_max_length(4096);
  // Before routing: the Host names this dashboard, and a state change is
  // JSON from its own origin (request_guard.h).
  const bool tls = this->tls();
  srv.set_pre_routing_handler([this, tls](const httplib::Request& req,
                                          httplib::Response& res) {
    const std::string host = req.get_header_value("Host");
    std::optional<Refusal> refusal = CheckHost(host, host_rule_);
    if (!refusal) {
      refusal =
          CheckStateChange(req.method, req.get_header_value("Content-Type"),
                           req.get_header_value("Origin"),
                           req.get_header_value("Sec-Fetch-Site"), host, tls);
    }
    if (!refusal) return httplib::Server::HandlerResponse::Unhandled;
    res.status = refusal->status;
    res.set_content(nlohmann::json{{"error", refusal->message}}.dump(), kJson);
    return httplib::Server::HandlerResponse::Handled;
  });

  auto page = [](absl::string_view text, const char* type) {
    return [text, type](const httplib::Request&, httplib::Response& res) {
      res.set_content(text.data(), text.size(), type);
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                     "img-src 'self' data:; frame-ancestors 'none'");
    };
  };
  srv.Get("/", page(web::IndexHtml(), "text/html; charset=utf-8"));
  srv.Get("/static/app.js",
          page(web::AppJs(), "text/javascript; charset=utf-8"));
  srv.Get("/static/chart.js",
          page(web::ChartJs(), "text/javascript; charset=utf-8"));
  srv.Get("/static/style.css",
          page(web::StyleCss(), "text/css; charset=utf-8"));

  // `handler` behind the token check for `needed`.
  using Handler = std::function<absl::Status(
      const httplib::Request&, httplib::Response&, auth::Role role)>;
  auto guarded = [this](auth::Role needed, Handler handler) {
    return [this, needed, handler](const httplib::Request& req,
                                   httplib::Response& res) {
      const std::shared_ptr<const auth::TokenSet> tokens = this->tokens();
      absl::StatusOr<auth::Role> role = CheckBearer(
          tokens.get(), req.get_header_value("Authorization"), needed);
      absl::Status status =
          role.ok() ? handler(req, res, *role) : role.status();
      if (!status.ok()) SetError(status, res);
    };
  };

  // `handler`'s answer as the JSON body, behind the token check for
  // `needed`; an error as SetError's.
  using JsonOr = absl::StatusOr<nlohmann::json>;
  using JsonHandler =
      std::function<JsonOr(const httplib::Request&, auth::Role role)>;
  auto json_api = [guarded](auth::Role needed, JsonHandler handler) {
    return guarded(
        needed,
        [handler](const httplib::Request& req, httplib::Response& res,
                  auth::Role role) -> absl::Status {
          TUNEFLEET_ASSIGN_OR_RETURN(nlohmann::json body, handler(req, role));
          SetJson(body, res);
          return absl::OkStatus();
        });
  };

  srv.Get("/api/whoami",
          json_api(auth::Role::kReader,
                   [this](const httplib::Request&, auth::Role role) -> JsonOr {
                     const bool cancel =
                         source_->CanCancel() && role == auth::Role::kTuner;
                     return nlohmann::json{
                         {"role", std::string(auth::RoleName(role))},
                         {"can_cancel", cancel},
                         {"title", options_.title},
                         {"metrics", static_cast<bool>(options_.metrics_text)}};
                   }));
  srv.Get("/api/fleet",
          json_api(auth::Role::kReader,
                   [this](const httplib::Request&, auth::Role) -> JsonOr {
                     TUNEFLEET_ASSIGN_OR_RETURN(data_source::FleetView fleet,
                                                source_->Fleet());
                     return FleetJson(fleet);
                   }));
  srv.Get("/api/jobs",
          json_api(auth::Role::kReader,
                   [this](const httplib::Request& req, auth::Role) -> JsonOr {
                     TUNEFLEET_ASSIGN_OR_RETURN(
                         int64_t limit,
                         IntParam(req, "limit", kDefaultJobs, kMaxJobs));
                     TUNEFLEET_ASSIGN_OR_RETURN(auto jobs,
                                                source_->Jobs(limit));
                     return JobsJson(jobs);
                   }));
  srv.Get(R"(/api/jobs/(\d+))",
          json_api(auth::Role::kReader,
                   [this](const httplib::Request& req, auth::Role) -> JsonOr {
                     TUNEFLEET_ASSIGN_OR_RETURN(int64_t id, JobIdOf(req));
                     TUNEFLEET_ASSIGN_OR_RETURN(auto job, source_->Job(id));
                     return nlohmann::json{{"job", ProgressJson(job)}};
                   }));
  srv.Get(R"(/api/jobs/(\d+)/trials)",
          json_api(auth::Role::kReader,
                   [this](const httplib::Request& req, auth::Role) -> JsonOr {
                     TUNEFLEET_ASSIGN_OR_RETURN(int64_t id, JobIdOf(req));
                     TUNEFLEET_ASSIGN_OR_RETURN(
                         int64_t after,
                         IntParam(req, "after", 0,
                                  std::numeric_limits<int64_t>::max()));
                     TUNEFLEET_ASSIGN_OR_RETURN(
                         int64_t limit,
                         IntParam(req, "limit", kDefaultTrials, kMaxTrials));
                     TUNEFLEET_ASSIGN_OR_RETURN(
                         auto trials, source_->Trials(id, after, limit));
                     return TrialsJson(trials);
                   }));
  srv.Post(R"(/api/jobs/(\d+)/cancel)",
           json_api(auth::Role::kTuner,
                    [this](const httplib::Request& req, auth::Role) -> JsonOr {
                      TUNEFLEET_ASSIGN_OR_RETURN(int64_t id, JobIdOf(req));
                      if (!source_->CanCancel()) {
                        return absl::FailedPreconditionError(
                            "this dashboard reads a database file: jobs "
                            "cannot be cancelled here");
                      }
                      TUNEFLEET_ASSIGN_OR_RETURN(auto job, source_->Cancel(id));
                      return nlohmann::json{{"job", ProgressJson(job)}};
                    }));
  if (options_.metrics_text) {
    srv.Get("/metrics", guarded(auth::Role::kReader,
                                [this](const httplib::Request&,
                                       httplib::Response& res, auth::Role) {
                                  res.set_content(options_.metrics_text(),
                                                  "text/plain; version=0.0.4");
                                  return absl::OkStatus();
                                }));
  }
}

}  // namespace tunefleet::dashboard
