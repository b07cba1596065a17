#include "cli/report_command.h"

#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "cli/common.h"
#include "cli/server_source.h"
#include "dashboard/report.h"

namespace tunefleet::cli {

void AddReportOptions(CLI::App* cmd, ReportOptions& options) {
  AddDbOption(cmd, options.db, "SQLite database file");
  cmd->add_option("--job", options.job_id,
                  "only this job or model job (default: the jobs table and "
                  "the newest jobs in full)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", options.out, "the HTML file to write")->required();
  cmd->add_option("--title", options.title, "the report's title");
}

int RunReport(const ReportOptions& options) {
  absl::StatusOr<std::unique_ptr<data_source::DataSource>> source =
      OpenDatabaseSource(options.db);
  if (!source.ok()) return ReportError("report", source.status());
  dashboard::ReportOptions report;
  report.job_id = options.job_id;
  report.title = !options.title.empty()
                     ? options.title
                     : absl::StrCat("tunefleet report: ", options.db,
                                    options.job_id != 0
                                        ? absl::StrCat(", job ", options.job_id)
                                        : "");
  absl::StatusOr<std::string> html = dashboard::RenderReport(**source, report);
  if (!html.ok()) return ReportError("report", html.status());
  // Fleet data (device names, records): readable by its owner only, as
  // the database is.
  if (absl::Status s = base::WriteFileAtomically(options.out, *html, 0600);
      !s.ok()) {
    return ReportError("report", s);
  }
  std::fprintf(stderr, "tunefleet report: wrote %s (%zu bytes)\n",
               options.out.c_str(), html->size());
  return kExitOk;
}

}  // namespace tunefleet::cli
