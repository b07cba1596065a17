#include "base/listen_check.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/files.h"

namespace tunefleet::base {

absl::Status ListenError(absl::string_view address, absl::string_view flag,
                         bool in_use) {
  const std::string use = absl::StrCat(
      "the port is in use (another tunefleet-server or tunefleet dashboard? "
      "stop it or pick another ",
      flag, " port)");
  return absl::UnavailableError(absl::StrCat(
      "cannot listen on ", address, " (", flag, "): ", use,
      in_use ? "" : " or the host is not an address of this machine"));
}

absl::Status CheckCanListen(const HostPort& address, absl::string_view flag) {
  if (address.port == 0 || address.host.empty()) return absl::OkStatus();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  const std::string shown = address.ToString();
  if (getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", shown, " (", flag, "): host ",
                     address.host, " is not an address of this machine"));
  }
  absl::Status status = absl::OkStatus();
  for (const addrinfo* a = found; a != nullptr && status.ok(); a = a->ai_next) {
    UniqueFd fd(
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;  // e.g. no IPv6 on this host
    const int yes = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0) continue;
    if (errno == EADDRINUSE) {
      status = ListenError(shown, flag, /*in_use=*/true);
    } else if (errno == EACCES) {
      status = absl::UnavailableError(
          absl::StrCat("cannot listen on ", shown, " (", flag,
                       "): permission denied (a port below 1024 needs "
                       "root); pick another ",
                       flag, " port"));
    } else if (errno == EADDRNOTAVAIL) {
      status = absl::UnavailableError(
          absl::StrCat("cannot listen on ", shown, " (", flag, "): host ",
                       address.host, " is not an address of this machine"));
    }
  }
  freeaddrinfo(found);
  return status;
}

}  // namespace tunefleet::base
