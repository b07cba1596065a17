#include "cli/measure_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "cli/embedded.h"

namespace tunefleet::cli {

CLI::App* AddMeasureCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "build, verify and time one config on this machine's OpenCL device "
      "(runs `tunefleet-agent measure`; --help lists its flags)");
  // Everything after `measure`, --help included, belongs to the agent.
  cmd->prefix_command();
  cmd->set_help_flag();
  return cmd;
}

int RunMeasure(const CLI::App& cmd) {
  absl::StatusOr<std::string> agent = FindAgentBinary();
  if (!agent.ok()) return ReportError("measure", agent.status());
  // argv[0] names this command in the agent's usage and errors.
  std::vector<std::string> args = {"tunefleet", "measure"};
  for (const std::string& arg : cmd.remaining()) args.push_back(arg);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(agent->c_str(), argv.data());
  return ReportError("measure",
                     absl::UnavailableError(absl::StrCat(
                         "cannot run ", *agent, ": ", std::strerror(errno))));
}

}  // namespace tunefleet::cli
