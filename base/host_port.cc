#include "base/host_port.h"

#include <arpa/inet.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tunefleet::base {
namespace {

absl::Status Refuse(absl::string_view flag, absl::string_view address,
                    absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " '", address, "': ", why,
                   "; expected HOST:PORT, e.g. 127.0.0.1:50051, "
                   "tuner.lan:50051 or [::1]:50051"));
}

}  // namespace

std::string HostPort::ToString() const {
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address,
                                       absl::string_view flag,
                                       bool allow_port_zero) {
  if (address.empty()) return Refuse(flag, address, "empty address");
  if (absl::StrContains(address, "://") || absl::StartsWith(address, "dns:") ||
      absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "ipv4:") ||
      absl::StartsWith(address, "ipv6:")) {
    return Refuse(flag, address, "no scheme (http://, dns:///, ...) wanted");
  }
  HostPort out;
  absl::string_view port_text;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) {
      return Refuse(flag, address, "unclosed '[' of an IPv6 address");
    }
    out.host = std::string(address.substr(1, close - 1));
    absl::string_view rest = address.substr(close + 1);
    if (rest.empty()) return Refuse(flag, address, "no port");
    if (rest.front() != ':') {
      return Refuse(flag, address, "':' expected after ']'");
    }
    port_text = rest.substr(1);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) {
      return Refuse(flag, address, "no port");
    }
    if (address.find(':') != colon) {
      return Refuse(flag, address, "an IPv6 address needs brackets");
    }
    out.host = std::string(address.substr(0, colon));
    port_text = address.substr(colon + 1);
  }
  if (out.host.empty()) return Refuse(flag, address, "no host");
  if (port_text.empty()) return Refuse(flag, address, "no port");
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos) {
    return Refuse(flag, address,
                  absl::StrCat("port '", port_text, "' is not a number"));
  }
  if (port > 65535 || port < 0 || (port == 0 && !allow_port_zero)) {
    return Refuse(flag, address,
                  absl::StrCat("port ", port, " is out of range (1 to 65535)"));
  }
  out.port = port;
  return out;
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  const std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace tunefleet::base
