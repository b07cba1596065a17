// What the dashboard's HTTP server checks before it routes a request,
// against pages of other sites in the user's browser (docs/SERVER_LIMITS.md,
// "HTTP protections"):
// - DNS rebinding: a page of evil.example whose name is made to resolve to
//   the dashboard's address sends Host: evil.example. Every request's Host
//   must name the dashboard: its listen address (any IP address of the
//   machine when it listens on all of them; localhost and loopback
//   addresses when on loopback) or a name it was given (--http-host);
//   otherwise 421 Misdirected Request.
// - Cross-site requests that change state (a form of another site posting
//   to /api/jobs/ID/cancel): every POST must carry Content-Type
//   application/json, which no form can send and which makes a browser ask
//   first (CORS preflight, never granted) on another origin's fetch
//   (else 415), and must not come from another origin by its Origin or
//   Sec-Fetch-Site header (else 403). With tokens a state change needs
//   one as well (token_check.h); without tokens (--no-auth, `tunefleet
//   dashboard --db`) these checks are what stands.
#ifndef TUNEFLEET_DASHBOARD_REQUEST_GUARD_H_
#define TUNEFLEET_DASHBOARD_REQUEST_GUARD_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet::dashboard {

// The names a dashboard answers to.
struct HostRule {
  // The host part of its listen address ("127.0.0.1", "0.0.0.0", "::",
  // "dash.example").
  std::string listen_host;
  // Further names (or addresses) it may be reached by, e.g. behind a
  // reverse proxy; "*" allows any Host (no DNS-rebinding check).
  std::vector<std::string> extra_names;
};

// Why a request is refused: the HTTP status and a message for the body.
struct Refusal {
  int status = 0;
  std::string message;
};

// The host part of a Host header value ("name", "name:port", "[v6]:port"),
// lower-cased and without a trailing dot; nullopt when it is not a valid
// host (empty, bad brackets, bad port, spaces).
std::optional<std::string> HostOfHeader(absl::string_view host_header);

// True for an IPv4 or IPv6 address literal (no brackets).
bool IsIpLiteral(absl::string_view host);

// The Host check: nullopt when `host_header` names the dashboard by
// `rule`; else 421 (400 for a missing or malformed header).
std::optional<Refusal> CheckHost(absl::string_view host_header,
                                 const HostRule& rule);

// The checks of a state-changing request (any method but GET, HEAD and
// OPTIONS): its Content-Type, and its Origin (scheme `tls` ? https : http,
// host and port as its Host header) and Sec-Fetch-Site ("same-origin" or
// "none") where sent. nullopt when allowed.
std::optional<Refusal> CheckStateChange(absl::string_view method,
                                        absl::string_view content_type,
                                        absl::string_view origin,
                                        absl::string_view sec_fetch_site,
                                        absl::string_view host_header,
                                        bool tls);

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_REQUEST_GUARD_H_
