// How the CLI shows a job's progress: a progress line on stderr while it
// runs, and a JSON object or a table row when listing jobs.
#ifndef TUNEFLEET_CLI_PROGRESS_H_
#define TUNEFLEET_CLI_PROGRESS_H_

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "proto/tuning.pb.h"

namespace tunefleet::cli {

// "  errors: COMPILE_ERROR 2, TIMEOUT 1", or "" when every trial was OK.
std::string ErrorsText(const tunefleet::v1::JobProgress& p);

// Progress on stderr: one rewritten line on a terminal; otherwise a line
// per new best and per tenth of the budget, so logs stay short. Not
// thread-safe.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet);
  void Update(const tunefleet::v1::JobProgress& p);
  // Ends the rewritten line on a terminal.
  void End();

 private:
  bool quiet_;
  bool tty_;
  uint32_t last_done_ = 0;
  double last_best_ = 0;
};

// {job_id, state, workload, device_key, strategy, priority, trials,
//  trials_total, requeued, errors, best {config, time_ms, gflops} | null,
//  message}.
nlohmann::json JobJson(const tunefleet::v1::JobProgress& p);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_PROGRESS_H_
