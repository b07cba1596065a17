#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "proto/names.h"

namespace tunefleet::cli {

using tunefleet::v1::JobProgress;

std::string ErrorsText(const JobProgress& p) {
  std::vector<std::string> parts;
  for (const auto& [code, count] : p.errors()) {
    if (code != "OK") parts.push_back(absl::StrCat(code, " ", count));
  }
  return parts.empty() ? ""
                       : absl::StrCat("  errors: ", absl::StrJoin(parts, ", "));
}

ProgressPrinter::ProgressPrinter(bool quiet) : quiet_(quiet), tty_(isatty(2)) {}

void ProgressPrinter::Update(const JobProgress& p) {
  if (quiet_) return;
  const double best = p.has_best() ? p.best().gflops() : 0;
  const uint32_t step = std::max(1u, p.trials_total() / 10);
  const bool milestone = p.trials_done() / step != last_done_ / step;
  if (!tty_ && !milestone && best == last_best_) return;
  std::string line = absl::StrFormat(
      "[%4u/%u] best %s", p.trials_done(), p.trials_total(),
      p.has_best() ? absl::StrFormat("%.2f GFLOP/s (%.3f ms)", best,
                                     p.best().time_ns() / 1e6)
                   : std::string("-"));
  line += ErrorsText(p);
  if (p.trials_requeued() > 0) {
    line += absl::StrCat("  requeued ", p.trials_requeued());
  }
  if (tty_) {
    std::fprintf(stderr, "\r%-100s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
  last_done_ = p.trials_done();
  last_best_ = best;
}

void ProgressPrinter::End() {
  if (!quiet_ && tty_) std::fprintf(stderr, "\n");
}

nlohmann::json JobJson(const JobProgress& p) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, count] : p.errors()) errors[code] = count;
  nlohmann::json best = nullptr;
  if (p.has_best()) {
    best = {{"config", ConfigJson(p.best().config())},
            {"config_string", ConfigText(p.best().config())},
            {"template", p.best().template_name()},
            {"trial_id", p.best().trial_id()},
            {"time_ms", p.best().time_ns() / 1e6},
            {"gflops", p.best().gflops()}};
  }
  return {{"job_id", p.job_id()},
          {"state", proto::JobStateName(p.state())},
          {"workload", p.workload_key()},
          {"template", p.template_name()},
          {"device_key", p.device_key()},
          {"strategy", proto::StrategyName(p.strategy())},
          {"priority", p.priority()},
          {"trials", p.trials_done()},
          {"trials_total", p.trials_total()},
          {"requeued", p.trials_requeued()},
          {"errors", errors},
          {"best", best},
          {"message", p.message()}};
}

}  // namespace tunefleet::cli
