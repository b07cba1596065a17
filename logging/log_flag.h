// The --log-level flag of tunefleet-server and tunefleet-agent (log.h).
#ifndef TUNEFLEET_LOGGING_LOG_FLAG_H_
#define TUNEFLEET_LOGGING_LOG_FLAG_H_

#include "CLI/CLI.hpp"
#include "logging/log.h"

namespace tunefleet::logging {

// Adds --log-level trace|debug|info|warn|error to `app`, setting `*level`
// (default: its value, info for a LogOptions' default); CLI11 refuses any
// other value, naming those taken.
CLI::Option* AddLogLevelFlag(CLI::App& app, Level* level);

}  // namespace tunefleet::logging

#endif  // TUNEFLEET_LOGGING_LOG_FLAG_H_
