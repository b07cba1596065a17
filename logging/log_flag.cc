#include "logging/log_flag.h"

#include <string>
#include <vector>

namespace tunefleet::logging {

CLI::Option* AddLogLevelFlag(CLI::App& app, Level* level) {
  std::vector<std::string> names;
  for (Level l : {Level::kTrace, Level::kDebug, Level::kInfo, Level::kWarn,
                  Level::kError}) {
    names.emplace_back(LevelName(l));
  }
  return app
      .add_option_function<std::string>(
          "--log-level",
          [level](const std::string& name) {
            // Checked by IsMember below before this runs.
            if (absl::StatusOr<Level> parsed = ParseLevel(name); parsed.ok()) {
              *level = *parsed;
            }
          },
          "the least severe log lines written to stderr: trace, debug, "
          "info, warn or error (under systemd, stderr is the journal and "
          "lines carry its priority; docs/FLEET.md, \"Logs\")")
      ->check(CLI::IsMember(names))
      ->default_str(std::string(LevelName(*level)));
}

}  // namespace tunefleet::logging
