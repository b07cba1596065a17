// Small host-side helpers the agent's parts share: whole writes to a file
// descriptor (the worker's pipes, the binary cache's files) and elapsed
// wall time in milliseconds.
#ifndef TUNEFLEET_DEVICE_AGENT_HOST_UTIL_H_
#define TUNEFLEET_DEVICE_AGENT_HOST_UTIL_H_

#include <chrono>

#include "absl/strings/string_view.h"

namespace tunefleet::agent {

// Writes all of `bytes` to `fd`, retrying short writes and EINTR. False on
// any other error (errno tells which).
bool WriteAll(int fd, absl::string_view bytes);

// Host wall time since `start`, in ms.
double MsSince(std::chrono::steady_clock::time_point start);

}  // namespace tunefleet::agent

#endif  // TUNEFLEET_DEVICE_AGENT_HOST_UTIL_H_
