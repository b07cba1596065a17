// tunefleet: the command-line client. `tunefleet tune` with no --server runs
// the embedded default (local server and agent, database ./tunefleet.db).
#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/guarded_main.h"
#include "base/version.h"
#include "cli/backup_command.h"
#include "cli/common.h"
#include "cli/dashboard_command.h"
#include "cli/emit_command.h"
#include "cli/jobs_command.h"
#include "cli/measure_command.h"
#include "cli/model_command.h"
#include "cli/query_command.h"
#include "cli/records_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/simulate_command.h"
#include "cli/space_command.h"
#include "cli/templates_command.h"
#include "cli/token_command.h"
#include "cli/tune_command.h"

namespace {

// A subcommand and what runs it once parsed.
struct Command {
  CLI::App* cmd;
  std::function<int()> run;
};

// Registers the subcommand `name`, which --help lists with `about`, on
// options of its own (kept alive by the Command): `add` declares its flags
// on them, and the Command runs `run` over them.
template <typename Options>
void Register(CLI::App& app, std::vector<Command>& commands, const char* name,
              const char* about, void (*add)(CLI::App*, Options&),
              int (*run)(const Options&)) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(name, about);
  add(cmd, *options);
  commands.push_back({cmd, [options, run] { return run(*options); }});
}

// The command line parsed and its one subcommand run; returns the exit
// code.
int RunCommandLine(int argc, char** argv) {
  // Every RPC failure reaches the user as one translated message
  // (client/rpc_error.h); gRPC's own log lines (handshake errors and the
  // like) would repeat it in its words. GRPC_VERBOSITY set by the user wins.
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  namespace cli = tunefleet::cli;
  CLI::App app{
      "tunefleet: tunes OpenCL kernels on a fleet of devices and keeps every "
      "measurement in one database.\n"
      "  tunefleet tune --op gemm --shape M=512,N=512,K=512 --trials 100\n"
      "  tunefleet query --db tunefleet.db\n"
      "  tunefleet emit --db tunefleet.db|--server HOST:PORT --device-key KEY "
      "--out tuned/\n"
      "  tunefleet templates --op gemm; tunefleet space --template gemm_tiled "
      "--shape M=64,N=64,K=64\n"
      "  tunefleet measure --shape M=64,N=64,K=64 --config reference\n"
      "  tunefleet run --onnx model.onnx --input-shape x=1,3,48,192 "
      "[--db tunefleet.db]\n"
      "  tunefleet jobs --server HOST:PORT; tunefleet watch|cancel JOB "
      "--server HOST:PORT\n"
      "  tunefleet token add --role tuner --tokens tokens.txt\n"
      "  tunefleet dashboard --db tunefleet.db; tunefleet report --db "
      "tunefleet.db --out report.html"};
  app.set_version_flag("--version",
                       std::string("tunefleet ") + tunefleet::base::kVersion);
  app.require_subcommand(1);
  // The subcommands, in the order --help lists them: each parsed one runs
  // its Run function on the options it registered.
  std::vector<Command> commands;
  Register(app, commands, "tune",
           "tune one workload: without --server, a local server and agent on "
           "this machine's OpenCL device are started, with records in --db",
           cli::AddTuneOptions, cli::RunTune);
  Register(app, commands, "query",
           "best tuning records per device key and workload",
           cli::AddQueryOptions, cli::RunQuery);
  Register(app, commands, "devices",
           "device keys known to a server (or a database) and the "
           "agents connected now",
           cli::AddDevicesOptions, cli::RunDevices);
  Register(app, commands, "emit",
           "write a C++ library of the best kernels for device keys: sources, "
           "lookup by device and shape, a header, and a CMake package",
           cli::AddEmitOptions, cli::RunEmit);
  CLI::App* measure_cmd = cli::AddMeasureCommand(app);
  commands.push_back(
      {measure_cmd, [measure_cmd] { return cli::RunMeasure(*measure_cmd); }});
  Register(app, commands, "simulate",
           "replay a fully measured table in place of a device: trials each "
           "strategy needs to reach 95% and 99% of the table's best",
           cli::AddSimulateOptions, cli::RunSimulate);
  Register(app, commands, "tasks",
           "list the distinct tuning tasks of an ONNX model",
           cli::AddTasksOptions, cli::RunTasks);
  Register(
      app, commands, "templates",
      "list the kernel templates: their op and its dims, version, and every "
      "knob with its values",
      cli::AddTemplatesOptions, cli::RunTemplates);
  Register(
      app, commands, "space",
      "a template's search space for one workload on this machine's OpenCL "
      "device: raw configs, valid configs (after the template's constraints "
      "for that workload and device) and a sample of valid ones",
      cli::AddSpaceOptions, cli::RunSpace);
  Register(app, commands, "export",
           "write a job's trials as a table for `tunefleet simulate`",
           cli::AddExportOptions, cli::RunExport);
  Register(app, commands, "jobs",
           "list jobs, newest first, from a server or a database file",
           cli::AddJobsOptions, cli::RunJobs);
  Register(app, commands, "watch",
           "follow a job's progress until it ends, from a server or a database "
           "file a server writes to (Ctrl-C stops watching, not the job)",
           cli::AddWatchOptions, cli::RunWatch);
  Register(app, commands, "cancel",
           "cancel a queued or running job; its finished trials stay",
           cli::AddCancelOptions, cli::RunCancel);
  Register(app, commands, "token",
           "manage the access tokens a tunefleet-server accepts",
           cli::AddTokenOptions, cli::RunToken);
  Register(app, commands, "dashboard",
           "serve the web dashboard (fleet, jobs, every job's trials) on a "
           "database file, read-only, until Ctrl-C",
           cli::AddDashboardOptions, cli::RunDashboard);
  Register(
      app, commands, "report",
      "write one self-contained HTML file of a database's jobs (charts and "
      "data inline) to attach to a ticket or a paper",
      cli::AddReportOptions, cli::RunReport);
  Register(app, commands, "backup",
           "Copy a database consistently while a server writes to it (SQLite's "
           "online backup API)",
           cli::AddBackupOptions, cli::RunBackup);
  auto records = std::make_shared<cli::RecordsOptions>();
  const cli::RecordsCommands records_cmds =
      cli::AddRecordsCommand(app, *records);
  commands.push_back({records_cmds.export_cmd,
                      [records] { return cli::RunRecordsExport(*records); }});
  commands.push_back({records_cmds.import_cmd,
                      [records] { return cli::RunRecordsImport(*records); }});
  Register(
      app, commands, "run",
      "run a whole ONNX model on this machine's OpenCL device with its tuned "
      "kernels and measure it (latency beside the estimate, host CPU, "
      "device memory, slowest layers); outputs as .npy",
      cli::AddRunOptions, cli::RunRun);
  // With --json, every error is one JSON object on stderr (docs/JSON.md),
  // a refused command line too.
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) json = true;
  }
  cli::SetJsonErrors(json);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (json && e.get_exit_code() != 0) {
      // The subcommand's name, as ReportError names it.
      std::string command = argc > 1 ? argv[1] : "";
      for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->parsed()) command = sub->get_name();
      }
      return cli::ReportError(command, absl::InvalidArgumentError(e.what()));
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : cli::kExitBadInput;
  }
  // The one subcommand given (require_subcommand(1)). (`tune`: Ctrl-C ends
  // it promptly; an embedded job is cancelled with it, its finished trials
  // staying in the database.)
  for (const Command& command : commands) {
    if (*command.cmd) return command.run();
  }
  return cli::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  return tunefleet::base::GuardedMain(
      [&] { return RunCommandLine(argc, argv); },
      [&](const char* what) {
        // Named by its subcommand, the first word that is not a flag.
        const char* command = "";
        for (int i = 1; i < argc && command[0] == '\0'; ++i) {
          if (argv[i][0] != '-') command = argv[i];
        }
        return tunefleet::cli::ReportError(
            command, absl::InternalError(absl::StrCat("unexpected: ", what)));
      });
}
