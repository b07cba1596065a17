#include "cli/jobs_command.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/flags.h"
#include "base/status_macros.h"
#include "cli/common.h"
#include "cli/model_view.h"
#include "cli/progress.h"
#include "cli/server_source.h"
#include "cli/table_text.h"
#include "contract/names.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

using tunefleet::v1::JobProgress;

// What `watch` and `cancel` take: the job, its server (required for
// `cancel`) and --json.
CLI::Option* AddJobServerAndJson(CLI::App* cmd, JobsOptions& o) {
  cmd->add_option("job", o.job_id, "job id (tunefleet jobs)")->required();
  CLI::Option* server = AddServerFlags(cmd, o.server, o.connection,
                                       "tunefleet-server address HOST:PORT");
  cmd->add_flag("--json", o.json, "print the job as one JSON object");
  return server;
}

}  // namespace

std::string JobTable(const std::vector<JobProgress>& jobs, size_t max_width) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(jobs.size());
  for (const JobProgress& p : jobs) {
    rows.push_back({absl::StrCat(p.job_id()), contract::JobStateName(p.state()),
                    absl::StrFormat("%u/%u", p.trials_done(), p.trials_total()),
                    JobWorkloadCell(p), p.device_key(),
                    contract::StrategyName(p.strategy()), JobBestCell(p)});
  }
  return FitTable(
      {"JOB", "STATE", "TRIALS", "WORKLOAD", "DEVICE KEY", "STRAT", "BEST"},
      rows, {true, false, true}, /*cut_columns=*/{3, 4}, max_width);
}

void AddJobsOptions(CLI::App* cmd, JobsOptions& o) {
  AddServerFlags(cmd, o.server, o.connection,
                 "tunefleet-server address HOST:PORT (live progress)");
  AddDbOption(cmd, o.db, "database file, when no --server");
  base::AddRangeOption(cmd, "--limit", o.limit, "newest jobs to list", 1,
                       1000000);
  cmd->add_option("--page-size", o.page_size,
                  "with --server: jobs per request (default: --limit, at "
                  "most the server's page)")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", o.json, "print a JSON list of jobs");
  cmd->add_flag("--wide", o.wide,
                "print every cell in full (default: long workloads and "
                "device keys are cut with '…' to fit the terminal)");
}

int RunJobs(const JobsOptions& o) {
  absl::StatusOr<std::unique_ptr<data_source::DataSource>> source =
      OpenDataSource({o.server, o.connection, o.db, o.page_size});
  if (!source.ok()) return ReportError("jobs", source.status());
  absl::StatusOr<std::vector<JobProgress>> jobs = (*source)->Jobs(o.limit);
  if (!jobs.ok()) return ReportError("jobs", jobs.status());
  if (o.json) {
    std::cout << ContractJsonText(*jobs) << "\n";
  } else {
    std::cout << JobTable(*jobs, o.wide ? 0 : TableWidth());
  }
  return kExitOk;
}

void AddWatchOptions(CLI::App* cmd, JobsOptions& o) {
  AddJobServerAndJson(cmd, o);
  AddDbOption(cmd, o.db,
              "database file, when no --server: read again every second, "
              "for a server that writes to it (a job its server left "
              "unfinished is watched until Ctrl-C)");
  cmd->add_flag("--quiet", o.quiet, "no progress lines");
}

int RunWatch(const JobsOptions& o) {
  absl::StatusOr<std::unique_ptr<data_source::DataSource>> source =
      OpenDataSource({o.server, o.connection, o.db, 0});
  if (!source.ok()) return ReportError("watch", source.status());
  // A job's progress line, or a model job's with a line per task change.
  ProgressPrinter printer(o.quiet);
  ModelProgressPrinter model_printer(o.quiet, /*task_lines=*/true);
  absl::StatusOr<JobProgress> last =
      (*source)->Watch(o.job_id, [&](const JobProgress& p) {
        if (p.has_model()) {
          model_printer.Update(p);
        } else {
          printer.Update(p);
        }
      });
  printer.End();
  model_printer.End();
  if (!last.ok()) return ReportError("watch", last.status());
  if (o.json) {
    std::cout << ContractJsonText(*last) << "\n";
  } else {
    std::cout << JobTable({*last});
    if (last->has_model()) {
      std::cout << "\n"
                << ModelTaskTable(*last) << "\n"
                << ModelLatencyText(last->model()) << "\n";
      if (const std::string measured = MeasuredLatencyText(last->model());
          !measured.empty()) {
        std::cout << measured << "\n";
      }
      if (const std::string layers = ModelLayerTable(*last); !layers.empty()) {
        std::cout << "\n" << layers;
      }
    }
    if (!last->message().empty()) std::cout << last->message() << "\n";
  }
  return last->state() == tunefleet::v1::JOB_STATE_DONE ? kExitOk : kExitFailed;
}

void AddCancelOptions(CLI::App* cmd, JobsOptions& o) {
  AddJobServerAndJson(cmd, o)->required();
}

int RunCancel(const JobsOptions& o) {
  absl::StatusOr<std::unique_ptr<ServerDataSource>> source =
      ServerDataSource::Dial(o.server, o.connection);
  if (!source.ok()) return ReportError("cancel", source.status());
  absl::StatusOr<JobProgress> cancelled = (*source)->Cancel(o.job_id);
  if (!cancelled.ok()) return ReportError("cancel", cancelled.status());
  const JobProgress& progress = *cancelled;
  if (o.json) {
    std::cout << ContractJsonText(progress) << "\n";
  } else {
    std::cout << CancelledText(progress) << "\n";
    if (progress.has_model()) {
      std::cout << "  " << ModelLatencyText(progress.model()) << "\n";
    }
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
