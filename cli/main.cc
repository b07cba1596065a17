// tunefleet: the command-line client. `tunefleet tune` with no --server runs
// the embedded default (local server and agent, database ./tunefleet.db).
#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "base/version.h"
#include "cli/backup_command.h"
#include "cli/records_command.h"
#include "cli/common.h"
#include "cli/dashboard_command.h"
#include "cli/emit_command.h"
#include "cli/jobs_command.h"
#include "cli/measure_command.h"
#include "cli/model_command.h"
#include "cli/query_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/simulate_command.h"
#include "cli/space_command.h"
#include "cli/templates_command.h"
#include "cli/token_command.h"
#include "cli/tune_command.h"

int main(int argc, char** argv) {
  // Every RPC failure reaches the user as one translated message
  // (client/rpc_error.h); gRPC's own log lines (handshake errors and the
  // like) would repeat it in its words. GRPC_VERBOSITY set by the user wins.
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
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
  tunefleet::cli::TuneOptions tune;
  tunefleet::cli::QueryOptions query;
  tunefleet::cli::DevicesOptions devices;
  tunefleet::cli::EmitOptions emit;
  tunefleet::cli::SimulateOptions simulate;
  tunefleet::cli::TasksOptions tasks;
  tunefleet::cli::ExportOptions export_table;
  tunefleet::cli::JobsOptions jobs, watch, cancel;
  tunefleet::cli::TokenOptions token;
  tunefleet::cli::DashboardOptions dashboard;
  tunefleet::cli::ReportOptions report;
  tunefleet::cli::TemplatesOptions templates_list;
  tunefleet::cli::SpaceOptions space;
  tunefleet::cli::BackupOptions backup;
  tunefleet::cli::RunOptions run;
  tunefleet::cli::RecordsOptions records;
  CLI::App* tune_cmd = tunefleet::cli::AddTuneCommand(app, tune);
  CLI::App* query_cmd = tunefleet::cli::AddQueryCommand(app, query);
  CLI::App* devices_cmd = tunefleet::cli::AddDevicesCommand(app, devices);
  CLI::App* emit_cmd = tunefleet::cli::AddEmitCommand(app, emit);
  CLI::App* measure_cmd = tunefleet::cli::AddMeasureCommand(app);
  CLI::App* simulate_cmd = tunefleet::cli::AddSimulateCommand(app, simulate);
  CLI::App* tasks_cmd = tunefleet::cli::AddTasksCommand(app, tasks);
  CLI::App* templates_cmd =
      tunefleet::cli::AddTemplatesCommand(app, templates_list);
  CLI::App* space_cmd = tunefleet::cli::AddSpaceCommand(app, space);
  CLI::App* export_cmd = tunefleet::cli::AddExportCommand(app, export_table);
  CLI::App* jobs_cmd = tunefleet::cli::AddJobsCommand(app, jobs);
  CLI::App* watch_cmd = tunefleet::cli::AddWatchCommand(app, watch);
  CLI::App* cancel_cmd = tunefleet::cli::AddCancelCommand(app, cancel);
  CLI::App* token_cmd = tunefleet::cli::AddTokenCommand(app, token);
  CLI::App* dashboard_cmd = tunefleet::cli::AddDashboardCommand(app, dashboard);
  CLI::App* report_cmd = tunefleet::cli::AddReportCommand(app, report);
  CLI::App* backup_cmd = tunefleet::cli::AddBackupCommand(app, backup);
  const tunefleet::cli::RecordsCommands records_cmds =
      tunefleet::cli::AddRecordsCommand(app, records);
  // With --json, every error is one JSON object on stderr (docs/JSON.md),
  // a refused command line too.
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) json = true;
  }
  tunefleet::cli::SetJsonErrors(json);
  CLI::App* run_cmd = tunefleet::cli::AddRunCommand(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (json && e.get_exit_code() != 0) {
      // The subcommand's name, as ReportError names it.
      std::string command = argc > 1 ? argv[1] : "";
      for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->parsed()) command = sub->get_name();
      }
      return tunefleet::cli::ReportError(
          command, absl::InvalidArgumentError(e.what()));
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : tunefleet::cli::kExitBadInput;
  }
  if (*tune_cmd) {
    // Ctrl-C ends the process promptly; an embedded job is cancelled with
    // it (its finished trials stay in the database).
    return tunefleet::cli::RunTune(tune);
  }
  if (*query_cmd) return tunefleet::cli::RunQuery(query);
  if (*devices_cmd) return tunefleet::cli::RunDevices(devices);
  if (*emit_cmd) return tunefleet::cli::RunEmit(emit);
  if (*measure_cmd) return tunefleet::cli::RunMeasure(*measure_cmd);
  if (*simulate_cmd) return tunefleet::cli::RunSimulate(simulate);
  if (*tasks_cmd) return tunefleet::cli::RunTasks(tasks);
  if (*templates_cmd) return tunefleet::cli::RunTemplates(templates_list);
  if (*space_cmd) return tunefleet::cli::RunSpace(space);
  if (*export_cmd) return tunefleet::cli::RunExport(export_table);
  if (*jobs_cmd) return tunefleet::cli::RunJobs(jobs);
  if (*watch_cmd) return tunefleet::cli::RunWatch(watch);
  if (*cancel_cmd) return tunefleet::cli::RunCancel(cancel);
  if (*token_cmd) return tunefleet::cli::RunToken(token);
  if (*dashboard_cmd) return tunefleet::cli::RunDashboard(dashboard);
  if (*report_cmd) return tunefleet::cli::RunReport(report);
  if (*backup_cmd) return tunefleet::cli::RunBackup(backup);
  if (*run_cmd) return tunefleet::cli::RunRun(run);
  if (*records_cmds.export_cmd) {
    return tunefleet::cli::RunRecordsExport(records);
  }
  if (*records_cmds.import_cmd) {
    return tunefleet::cli::RunRecordsImport(records);
  }
  return tunefleet::cli::kExitBadInput;
}
