// `tunefleet report`: the dashboard's job pages as one self-contained HTML
// file to attach to a ticket or a paper. Chart.js, the page's script and
// style and the data (as JSON) are all inline; the file loads nothing and
// needs no server.
#ifndef TUNEFLEET_DASHBOARD_REPORT_H_
#define TUNEFLEET_DASHBOARD_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "data_source/data_source.h"

namespace tunefleet::dashboard {

// Jobs a report without a job id shows in full, at most (newest first);
// the jobs table lists up to kMaxJobs more.
inline constexpr int64_t kReportDetailedJobs = 20;

struct ReportOptions {
  int64_t job_id = 0;  // 0: the jobs table and the newest jobs in full
  std::string title = "tunefleet report";
  int64_t now_ms = 0;  // Unix ms written as the report's time; 0: now
};

// The report's HTML. Errors: the source's (NOT_FOUND for an unknown
// job_id).
absl::StatusOr<std::string> RenderReport(data_source::DataSource& source,
                                         const ReportOptions& options);

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_REPORT_H_
