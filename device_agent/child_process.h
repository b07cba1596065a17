// The start of the agent's child processes: the measurement worker
// (worker.h) and a model run (model_run_handler.h), each the agent's own
// executable started as `<exe> FLAG PLATFORM DEVICE [more arguments]`.
#ifndef TUNEFLEET_DEVICE_AGENT_CHILD_PROCESS_H_
#define TUNEFLEET_DEVICE_AGENT_CHILD_PROCESS_H_

#include <optional>

namespace tunefleet::device_agent {

// Whether this process was started as the child of `flag` (its argv[1]).
bool IsChildInvocation(int argc, char** argv, const char* flag);

// Ties the child to the agent (SIGKILL when the agent ends:
// PR_SET_PDEATHSIG) and reads its OpenCL PLATFORM and DEVICE indices
// (argv[2] and argv[3]) into `*platform` and `*device`; more arguments
// after them only when `more_arguments`. Returns the exit code to end with
// at once: 1 when the agent ended before this could be set up, 2 for a
// missing, malformed or extra argument; nullopt to go on.
std::optional<int> StartChild(int argc, char** argv, bool more_arguments,
                              int* platform, int* device);

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_CHILD_PROCESS_H_
