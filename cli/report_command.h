// `tunefleet report --db FILE [--job N] --out report.html`: the dashboard's
// job pages as one self-contained HTML file (Chart.js, the data and the
// plots' script inline; dashboard/report.h) to attach to a ticket or a
// paper.
#ifndef TUNEFLEET_CLI_REPORT_COMMAND_H_
#define TUNEFLEET_CLI_REPORT_COMMAND_H_

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::cli {

struct ReportOptions {
  std::string db = "tunefleet.db";
  int64_t job_id = 0;  // 0: the jobs table and the newest jobs in full
  std::string out;     // the HTML file to write
  std::string title;   // empty: "tunefleet report: <db>[, job N]"
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddReportOptions(CLI::App* cmd, ReportOptions& options);
// Exit: 0 written; 2 for a missing database or unknown job; 1 when the
// file cannot be written.
int RunReport(const ReportOptions& options);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_REPORT_COMMAND_H_
