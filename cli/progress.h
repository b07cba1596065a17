// How the CLI shows a job's progress: a progress line on stderr while it
// runs, and the texts of its summary. Its JSON is contract::ContractJson
// (contract/json.h), the same object the dashboard's API serves.
#ifndef TUNEFLEET_CLI_PROGRESS_H_
#define TUNEFLEET_CLI_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

// "  errors: COMPILE_ERROR 2, TIMEOUT 1", or "" when every trial was OK;
// then, once the job learned its kernels' work-group limit
// (JobProgress.work_group_limit), "  work-group limit 256: 40 configs above
// it skipped" (a model job: "  40 configs above their task's work-group
// limit skipped").
std::string ErrorsText(const tunefleet::v1::JobProgress& p);

// Writes a progress line to `out` and flushes it: on a terminal (`tty`)
// rewriting the current line (then `*line_open` is true), else as a line
// of its own.
void WriteProgressLine(FILE* out, bool tty, const std::string& line,
                       bool* line_open);

// Progress on `out` (stderr for the commands): one rewritten line on a
// terminal; otherwise a line per new best and per tenth of the budget, so
// logs stay short. Why the job waits (JobProgress.waiting_reason) gets a
// line of its own each time it changes, not every update. Not thread-safe.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet, FILE* out = stderr);
  void Update(const tunefleet::v1::JobProgress& p);
  // Ends the rewritten line on a terminal.
  void End();

 private:
  bool quiet_;
  FILE* out_;
  bool tty_;
  bool line_open_ = false;  // a rewritten line is on the terminal
  uint32_t last_done_ = 0;
  double last_best_ = 0;
  std::string waiting_;  // the waiting_reason last shown
};

// What one run of a job's kernel does: the template's FLOPs and bytes for
// the job's workload, both 0 where this process does not know the
// template (another server's user spec) or the job is a model job.
struct TaskCounts {
  double flops = 0;
  double bytes = 0;
  // A template that counts no FLOPs but moves bytes (copy, fill): its
  // speed is shown as GB/s in place of GFLOP/s.
  bool bandwidth_only() const { return flops == 0 && bytes > 0; }
};
TaskCounts CountsOf(const tunefleet::v1::JobProgress& p);

// How a tuned kernel's time compares with the naive reference's, both in
// the same unit (> 0): "2.3x faster", "1.7x slower", or "as fast" when
// they are within 5%.
std::string RelativeSpeed(double reference, double tuned);
// The same as a sentence: "tuned kernel is 2.3x faster than the naive
// reference", "... 1.7x slower than ...", "... as fast as ...".
std::string SpeedupText(double reference, double tuned);

// "search space has 16 configs; all measured before the 30-trial budget"
// when a job ended done because its space ran out before its budget; ""
// otherwise.
std::string SpaceExhaustedText(const tunefleet::v1::JobProgress& p);

// One count for a cancelled job, naming the trials still in flight (the
// job's end records them as CANCELLED: its count stays this one): "cancelled
// job 62: 3 of 300 trials done; 2 in flight (trials 55, 56) end unmeasured
// (CANCELLED)".
std::string CancelledText(const tunefleet::v1::JobProgress& p);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_PROGRESS_H_
