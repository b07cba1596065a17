#include "dashboard/request_guard.h"

#include <arpa/inet.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tunefleet::dashboard {
namespace {

bool IsLoopbackName(absl::string_view host) {
  if (host == "localhost" || absl::EndsWith(host, ".localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  return host == "::1";
}

bool IsWildcard(absl::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

// `host` without IPv6 brackets, lower case.
std::string Normalized(absl::string_view host) {
  host = absl::StripPrefix(host, "[");
  host = absl::StripSuffix(host, "]");
  host = absl::StripSuffix(host, ".");
  return absl::AsciiStrToLower(host);
}

bool ValidPort(absl::string_view port) {
  int value = 0;
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), absl::ascii_isdigit) &&
         absl::SimpleAtoi(port, &value) && value <= 65535;
}

}  // namespace

bool IsIpLiteral(absl::string_view host) {
  const std::string text(host);
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, text.c_str(), &v4) == 1 ||
         inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

std::optional<std::string> HostOfHeader(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty() || value.size() > 255) return std::nullopt;
  absl::string_view host = value;
  if (value.front() == '[') {
    const size_t close = value.find(']');
    if (close == absl::string_view::npos) return std::nullopt;
    host = value.substr(1, close - 1);
    absl::string_view rest = value.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !ValidPort(rest.substr(1)))) {
      return std::nullopt;
    }
    if (!IsIpLiteral(host)) return std::nullopt;
  } else {
    const size_t colon = value.find(':');
    if (colon != absl::string_view::npos) {
      if (!ValidPort(value.substr(colon + 1))) return std::nullopt;
      host = value.substr(0, colon);
    }
  }
  if (host.empty()) return std::nullopt;
  for (char c : host) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_' &&
        c != ':') {
      return std::nullopt;
    }
  }
  std::string out = Normalized(host);
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<Refusal> CheckHost(absl::string_view host_header,
                                 const HostRule& rule) {
  std::optional<std::string> host = HostOfHeader(host_header);
  if (!host) {
    return Refusal{400, host_header.empty()
                            ? "no Host header: HTTP/1.1 requests need one"
                            : "the Host header is not a host name or "
                              "address with an optional port"};
  }
  for (const std::string& name : rule.extra_names) {
    if (name == "*" || Normalized(name) == *host) return std::nullopt;
  }
  const std::string listen = Normalized(rule.listen_host);
  if (*host == listen) return std::nullopt;
  if (IsLoopbackName(listen) && IsLoopbackName(*host)) return std::nullopt;
  if (IsWildcard(rule.listen_host) &&
      (IsIpLiteral(*host) || IsLoopbackName(*host))) {
    return std::nullopt;
  }
  return Refusal{
      421, absl::StrCat("Host '", *host,
                        "' is not a name of this dashboard (it answers to its "
                        "listen address",
                        IsWildcard(rule.listen_host) ? "es" : "",
                        "; give other names with --http-host NAME)")};
}

std::optional<Refusal> CheckStateChange(absl::string_view method,
                                        absl::string_view content_type,
                                        absl::string_view origin,
                                        absl::string_view sec_fetch_site,
                                        absl::string_view host_header,
                                        bool tls) {
  if (method == "GET" || method == "HEAD" || method == "OPTIONS") {
    return std::nullopt;
  }
  absl::string_view media = content_type.substr(0, content_type.find(';'));
  media = absl::StripAsciiWhitespace(media);
  if (!absl::EqualsIgnoreCase(media, "application/json")) {
    return Refusal{415,
                   "a call that changes state takes Content-Type: "
                   "application/json (what the dashboard's page sends)"};
  }
  if (!sec_fetch_site.empty() && sec_fetch_site != "same-origin" &&
      sec_fetch_site != "none") {
    return Refusal{403, absl::StrCat("a call that changes state must come "
                                     "from the dashboard's own page, not "
                                     "from a ",
                                     sec_fetch_site, " page")};
  }
  if (!origin.empty()) {
    const std::string same = absl::StrCat(tls ? "https://" : "http://",
                                          absl::AsciiStrToLower(host_header));
    if (!absl::EqualsIgnoreCase(absl::StripSuffix(origin, "/"), same)) {
      return Refusal{403,
                     "a call that changes state must come from the "
                     "dashboard's own page (its Origin is another "
                     "site)"};
    }
  }
  return std::nullopt;
}

}  // namespace tunefleet::dashboard
