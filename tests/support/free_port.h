// A TCP port free right now on loopback, for tests and bench/ programs
// that start servers on a port of their choosing. Header-only, no gtest.
#ifndef TUNEFLEET_TESTS_FREE_PORT_H_
#define TUNEFLEET_TESTS_FREE_PORT_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tunefleet::testing {

// A TCP port on 127.0.0.1 free a moment ago (another process may take it
// before the caller binds it); 0 when none could be had.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_FREE_PORT_H_
