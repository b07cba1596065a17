#include "cli/jobs_command.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "proto/names.h"
#include "proto/tuning.grpc.pb.h"
#include "server/job_manager.h"
#include "store/store.h"

namespace tunefleet::cli {
namespace {

using tunefleet::v1::JobProgress;

absl::StatusOr<std::vector<JobProgress>> ListFromServer(const JobsOptions& o) {
  absl::StatusOr<client::ServerConnection> server =
      client::ConnectionTo(o.server, o.connection);
  if (!server.ok()) return server.status();
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(*server));
  grpc::ClientContext context;
  tunefleet::v1::ListJobsRequest request;
  request.set_limit(o.limit);
  tunefleet::v1::ListJobsResponse response;
  absl::Status s = FromGrpc(stub->ListJobs(&context, request, &response));
  if (!s.ok()) return s;
  return std::vector<JobProgress>(response.jobs().begin(),
                                  response.jobs().end());
}

absl::StatusOr<std::vector<JobProgress>> ListFromDatabase(
    const std::string& path, uint32_t limit) {
  auto store = OpenDatabase(path);
  if (!store.ok()) return store.status();
  auto rows = (*store)->ListJobs(limit);
  if (!rows.ok()) return rows.status();
  std::vector<JobProgress> out;
  for (const store::Job& row : *rows) {
    auto p = server::StoredProgress(**store, row);
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
  }
  return out;
}

void PrintJobTable(const std::vector<JobProgress>& jobs) {
  std::cout << absl::StrFormat("%6s %-10s %-11s %-34s %-20s %-6s %s\n", "JOB",
                               "STATE", "TRIALS", "WORKLOAD", "DEVICE KEY",
                               "STRAT", "BEST");
  for (const JobProgress& p : jobs) {
    const std::string best =
        p.has_best() ? absl::StrFormat("%.2f GFLOP/s", p.best().gflops()) : "-";
    std::cout << absl::StrFormat(
        "%6d %-10s %-11s %-34s %-20s %-6s %s\n", p.job_id(),
        proto::JobStateName(p.state()),
        absl::StrFormat("%u/%u", p.trials_done(), p.trials_total()),
        p.workload_key(), p.device_key(), proto::StrategyName(p.strategy()),
        best);
  }
}

void AddServerAndJson(CLI::App* cmd, JobsOptions& o) {
  cmd->add_option("--server", o.server, "tunefleet-server address HOST:PORT")
      ->required();
  AddConnectionFlags(cmd, o.connection);
  cmd->add_flag("--json", o.json, "print the job as one JSON object");
}

}  // namespace

CLI::App* AddJobsCommand(CLI::App& app, JobsOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "jobs", "list jobs, newest first, from a server or a database file");
  cmd->add_option("--server", o.server,
                  "tunefleet-server address HOST:PORT (live progress)");
  AddConnectionFlags(cmd, o.connection);
  cmd->add_option("--db", o.db, "database file, when no --server")
      ->capture_default_str();
  cmd->add_option("--limit", o.limit, "newest jobs to list")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", o.json, "print a JSON list of jobs");
  return cmd;
}

int RunJobs(const JobsOptions& o) {
  absl::StatusOr<std::vector<JobProgress>> jobs =
      o.server.empty() ? ListFromDatabase(o.db, o.limit) : ListFromServer(o);
  if (!jobs.ok()) return ReportError("jobs", jobs.status());
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const JobProgress& p : *jobs) list.push_back(JobJson(p));
    std::cout << list.dump(2) << "\n";
  } else {
    PrintJobTable(*jobs);
  }
  return kExitOk;
}

CLI::App* AddWatchCommand(CLI::App& app, JobsOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "follow a job's progress until it ends (Ctrl-C stops watching, "
      "not the job)");
  cmd->add_option("job", o.job_id, "job id (tunefleet jobs)")->required();
  AddServerAndJson(cmd, o);
  cmd->add_flag("--quiet", o.quiet, "no progress lines");
  return cmd;
}

int RunWatch(const JobsOptions& o) {
  absl::StatusOr<client::ServerConnection> server =
      client::ConnectionTo(o.server, o.connection);
  if (!server.ok()) return ReportError("watch", server.status());
  ProgressPrinter printer(o.quiet);
  absl::StatusOr<JobProgress> last = WatchJob(
      *server, o.job_id, [&](const JobProgress& p) { printer.Update(p); });
  printer.End();
  if (!last.ok()) return ReportError("watch", last.status());
  if (o.json) {
    std::cout << JobJson(*last).dump(2) << "\n";
  } else {
    PrintJobTable({*last});
    if (!last->message().empty()) std::cout << last->message() << "\n";
  }
  return last->state() == tunefleet::v1::JOB_STATE_DONE ? kExitOk : kExitFailed;
}

CLI::App* AddCancelCommand(CLI::App& app, JobsOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "cancel", "cancel a queued or running job; its finished trials stay");
  cmd->add_option("job", o.job_id, "job id (tunefleet jobs)")->required();
  AddServerAndJson(cmd, o);
  return cmd;
}

int RunCancel(const JobsOptions& o) {
  absl::StatusOr<client::ServerConnection> server =
      client::ConnectionTo(o.server, o.connection);
  if (!server.ok()) return ReportError("cancel", server.status());
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(*server));
  grpc::ClientContext context;
  tunefleet::v1::CancelJobRequest request;
  request.set_job_id(o.job_id);
  JobProgress progress;
  absl::Status s = FromGrpc(stub->CancelJob(&context, request, &progress));
  if (!s.ok()) return ReportError("cancel", s);
  if (o.json) {
    std::cout << JobJson(progress).dump(2) << "\n";
  } else {
    std::cout << "job " << progress.job_id() << " "
              << proto::JobStateName(progress.state()) << " after "
              << progress.trials_done() << " of " << progress.trials_total()
              << " trials\n";
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
