// A GET to the HTTP front end (dashboard, JSON API, /metrics) of a server
// that a test started on loopback, through cpp-httplib.
#ifndef TUNEFLEET_TESTS_SUPPORT_HTTP_GET_H_
#define TUNEFLEET_TESTS_SUPPORT_HTTP_GET_H_

#include <string>

#include "httplib.h"

namespace tunefleet::testing {

// `path` from 127.0.0.1:`port` with `token` as bearer (none when empty),
// waiting up to 10 s for the answer; a false result when there is none.
inline httplib::Result HttpGet(int port, const std::string& path,
                               const std::string& token) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return client.Get(path.c_str(), headers);
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_HTTP_GET_H_
