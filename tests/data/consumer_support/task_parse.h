// For the programs under tests/data/ built against an emitted library: a
// canonical workload string ("conv2d N=1 C=16 ... act=relu fp32", as
// `tunefleet tasks` prints it) read into its op, dims and attributes.
// Header-only: each consumer is its own CMake project.
#ifndef TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_TASK_PARSE_H_
#define TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_TASK_PARSE_H_

#include <map>
#include <sstream>
#include <string>

namespace consumer_support {

struct Task {
  std::string op;
  std::map<std::string, long long> d;       // dims: "N" -> 1, ...
  std::map<std::string, std::string> attr;  // the other key=value pairs
};

// The op (the first word), then every key=value token: a value starting
// with a digit or '-' is a dim, any other an attribute; words without '='
// (the dtype) are passed over.
inline Task ParseTask(const std::string& text) {
  Task t;
  std::istringstream in(text);
  in >> t.op;
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos) continue;  // dtype
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    if (!value.empty() &&
        (value[0] == '-' || (value[0] >= '0' && value[0] <= '9'))) {
      t.d[key] = std::stoll(value);
    } else {
      t.attr[key] = value;
    }
  }
  return t;
}

}  // namespace consumer_support

#endif  // TUNEFLEET_TESTS_DATA_CONSUMER_SUPPORT_TASK_PARSE_H_
