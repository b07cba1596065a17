#include "dashboard/report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "dashboard/json_views.h"
#include "dashboard/web_assets.h"
#include "nlohmann/json.hpp"

namespace tunefleet::dashboard {
namespace {

// Trials read per call while collecting a job's trials.
constexpr int64_t kTrialPage = 10000;

// Every measured trial of a job, in id order.
absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> AllTrials(
    data_source::DataSource& source, int64_t job_id) {
  std::vector<tunefleet::v1::TuningRecord> all;
  int64_t after = 0;
  while (true) {
    TUNEFLEET_ASSIGN_OR_RETURN(auto page,
                               source.Trials(job_id, after, kTrialPage));
    if (page.empty()) break;
    after = page.back().trial_id();
    all.insert(all.end(), page.begin(), page.end());
    if (static_cast<int64_t>(page.size()) < kTrialPage) break;
  }
  return all;
}

absl::StatusOr<nlohmann::json> JobDetail(data_source::DataSource& source,
                                         int64_t job_id) {
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::JobProgress job,
                             source.Job(job_id));
  TUNEFLEET_ASSIGN_OR_RETURN(auto trials, AllTrials(source, job_id));
  return nlohmann::json{{"job", ProgressJson(job)},
                        {"trials", TrialsJson(trials)["trials"]}};
}

// JSON `text` safe inside a <script> element: no "</" (which could close
// it) and no "<!--". (Chart.js and app.js hold neither; dashboard_test
// checks.)
std::string ScriptSafe(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"</", "<\\/"}, {"<!--", "<\\!--"}});
}

std::string HtmlEscape(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

}  // namespace

absl::StatusOr<std::string> RenderReport(data_source::DataSource& source,
                                         const ReportOptions& options) {
  nlohmann::json data = {
      {"title", options.title},
      {"generated_ms", options.now_ms != 0 ? options.now_ms : base::NowMs()}};
  nlohmann::json details = nlohmann::json::array();
  if (options.job_id != 0) {
    TUNEFLEET_ASSIGN_OR_RETURN(nlohmann::json detail,
                               JobDetail(source, options.job_id));
    data["jobs"] = nlohmann::json::array({detail["job"]});
    details.push_back(std::move(detail));
  } else {
    TUNEFLEET_ASSIGN_OR_RETURN(auto jobs, source.Jobs(1000));
    data["jobs"] = JobsJson(jobs)["jobs"];
    for (size_t i = 0;
         i < jobs.size() && static_cast<int64_t>(i) < kReportDetailedJobs;
         ++i) {
      TUNEFLEET_ASSIGN_OR_RETURN(nlohmann::json detail,
                                 JobDetail(source, jobs[i].job_id()));
      details.push_back(std::move(detail));
    }
  }
  data["details"] = std::move(details);
  const std::string json =
      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"generator\" content=\"tunefleet report\">\n<title>",
      HtmlEscape(options.title), "</title>\n<style>\n", web::StyleCss(),
      "\n</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
      "<script>\n",
      web::ChartJs(),
      "\n</script>\n<script>\nwindow.TUNEFLEET_REPORT = ", ScriptSafe(json),
      ";\n</script>\n<script>\n", web::AppJs(),
      "\n</script>\n</body>\n</html>\n");
}

}  // namespace tunefleet::dashboard
