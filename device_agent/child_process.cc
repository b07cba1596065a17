#include "device_agent/child_process.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "absl/strings/numbers.h"

namespace tunefleet::device_agent {

bool IsChildInvocation(int argc, char** argv, const char* flag) {
  return argc >= 2 && std::strcmp(argv[1], flag) == 0;
}

std::optional<int> StartChild(int argc, char** argv, bool more_arguments,
                              int* platform, int* device) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;  // the agent died before we got here
  if (argc < 4 || (!more_arguments && argc != 4) ||
      !absl::SimpleAtoi(argv[2], platform) ||
      !absl::SimpleAtoi(argv[3], device)) {
    return 2;
  }
  return std::nullopt;
}

}  // namespace tunefleet::device_agent
