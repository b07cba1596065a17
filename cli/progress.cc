#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "contract/names.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"

namespace tunefleet::cli {

using tunefleet::v1::JobProgress;

std::string ErrorsText(const JobProgress& p) {
  std::vector<std::string> parts;
  for (const auto& [code, count] : p.errors()) {
    if (code != "OK") parts.push_back(absl::StrCat(code, " ", count));
  }
  std::string text =
      parts.empty() ? ""
                    : absl::StrCat("  errors: ", absl::StrJoin(parts, ", "));
  if (p.work_group_limit() > 0) {
    absl::StrAppend(&text, "  work-group limit ", p.work_group_limit(), ": ",
                    p.configs_over_work_group_limit(),
                    " configs above it skipped");
  } else if (p.configs_over_work_group_limit() > 0) {  // a model job's sum
    absl::StrAppend(&text, "  ", p.configs_over_work_group_limit(),
                    " configs above their task's work-group limit skipped");
  }
  return text;
}

void WriteProgressLine(FILE* out, bool tty, const std::string& line,
                       bool* line_open) {
  if (tty) {
    std::fprintf(out, "\r%-100s", line.c_str());
    *line_open = true;
  } else {
    std::fprintf(out, "%s\n", line.c_str());
  }
  std::fflush(out);
}

ProgressPrinter::ProgressPrinter(bool quiet, FILE* out)
    : quiet_(quiet), out_(out), tty_(isatty(fileno(out))) {}

void ProgressPrinter::Update(const JobProgress& p) {
  if (quiet_) return;
  if (p.waiting_reason() != waiting_) {
    waiting_ = p.waiting_reason();
    if (!waiting_.empty()) {
      if (line_open_) std::fprintf(out_, "\n");
      line_open_ = false;
      std::fprintf(out_, "job %lld waits: %s\n",
                   static_cast<long long>(p.job_id()), waiting_.c_str());
      std::fflush(out_);
    }
  }
  // A copy's or fill's speed is its bandwidth (0 GFLOP/s says nothing).
  const TaskCounts counts = CountsOf(p);
  const bool bandwidth = counts.bandwidth_only();
  const double best = !p.has_best() ? 0
                      : bandwidth   ? counts.bytes / p.best().time_ns()
                                    : p.best().gflops();
  const uint32_t step = std::max(1u, p.trials_total() / 10);
  const bool milestone = p.trials_done() / step != last_done_ / step;
  if (!tty_ && !milestone && best == last_best_) return;
  std::string line = absl::StrFormat(
      "[%4u/%u] best %s", p.trials_done(), p.trials_total(),
      p.has_best()
          ? absl::StrFormat(
                "%.2f %s (%.3f ms)", bandwidth ? best : p.best().gflops(),
                bandwidth ? "GB/s" : "GFLOP/s", p.best().time_ns() / 1e6)
          : std::string("-"));
  line += ErrorsText(p);
  if (p.trials_requeued() > 0) {
    line += absl::StrCat("  requeued ", p.trials_requeued());
  }
  WriteProgressLine(out_, tty_, line, &line_open_);
  last_done_ = p.trials_done();
  last_best_ = best;
}

void ProgressPrinter::End() {
  if (!quiet_ && line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
}

std::string RelativeSpeed(double reference, double tuned) {
  const double ratio = reference / tuned;
  if (ratio >= 0.95 && ratio <= 1.05) return "as fast";
  if (ratio > 1) return absl::StrFormat("%.1fx faster", ratio);
  return absl::StrFormat("%.1fx slower", 1 / ratio);
}

std::string SpeedupText(double reference, double tuned) {
  const std::string relative = RelativeSpeed(reference, tuned);
  return absl::StrCat("tuned kernel is ", relative,
                      relative == "as fast" ? " as" : " than",
                      " the naive reference");
}

std::string SpaceExhaustedText(const JobProgress& p) {
  if (p.state() != tunefleet::v1::JOB_STATE_DONE || p.space_size() == 0 ||
      p.space_size() >= p.trials_total() || p.trials_done() < p.space_size()) {
    return "";
  }
  return absl::StrCat("search space has ", p.space_size(),
                      p.space_size() == 1 ? " config" : " configs",
                      "; all measured before the ", p.trials_total(),
                      "-trial budget");
}

std::string CancelledText(const JobProgress& p) {
  std::string text =
      absl::StrCat("cancelled job ", p.job_id(), ": ", p.trials_done(), " of ",
                   p.trials_total(), " trials done");
  const int in_flight = p.in_flight_trial_ids_size();
  if (in_flight == 0) return text;
  // Name a few; a big fleet may hold many.
  constexpr int kNamed = 10;
  std::vector<std::string> ids;
  for (int i = 0; i < in_flight && i < kNamed; ++i) {
    ids.push_back(absl::StrCat(p.in_flight_trial_ids(i)));
  }
  absl::StrAppend(&text, "; ", in_flight, " in flight (trial",
                  in_flight == 1 ? " " : "s ", absl::StrJoin(ids, ", "),
                  in_flight > kNamed
                      ? absl::StrCat(" and ", in_flight - kNamed, " more")
                      : "",
                  in_flight == 1 ? ") ends unmeasured (CANCELLED)"
                                 : ") end unmeasured (CANCELLED)");
  return text;
}

TaskCounts CountsOf(const JobProgress& p) {
  TaskCounts counts;
  if (p.has_model() || p.workload_key().empty()) return counts;
  absl::StatusOr<templates::Workload> w =
      templates::Workload::ParseCanonical(p.workload_key());
  if (!w.ok()) return counts;
  absl::StatusOr<const templates::KernelTemplate*> t =
      templates::FindTemplate(w->op(), p.template_name());
  if (!t.ok()) return counts;
  counts.flops = (*t)->Flops(*w);
  counts.bytes = (*t)->Bytes(*w);
  return counts;
}

}  // namespace tunefleet::cli
