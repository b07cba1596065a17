// Store: what the web dashboard shows of the fleet that only the trials
// know (dashboard/): per agent, its trials leased now and measured, by
// error code.
#include <algorithm>

#include "base/status_macros.h"
#include "store/store.h"

namespace tunefleet::store {

absl::StatusOr<std::vector<AgentTrialCounts>> Store::AgentTrials() {
  std::map<std::pair<std::string, std::string>, AgentTrialCounts> by_agent;
  {
    absl::MutexLock lock(&mu_);
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare(
            "SELECT t.agent, j.device_key, t.state, COALESCE(t.error, ''), "
            "COUNT(*), MAX(COALESCE(t.done_ms, t.leased_ms, 0)) "
            "FROM trials t JOIN jobs j ON t.job_id = j.id "
            "WHERE t.agent IS NOT NULL AND t.state != 'pending' "
            "GROUP BY 1, 2, 3, 4"));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&by_agent](const Statement& row) {
      AgentTrialCounts& counts = by_agent[{row.Text(0), row.Text(1)}];
      counts.agent = row.Text(0);
      counts.device_key = row.Text(1);
      const int64_t n = row.Int(4);
      if (row.Text(2) == "leased") {
        counts.leased += n;
      } else if (row.Text(3) == "CANCELLED") {
        // Never measured: its job ended first.
      } else {
        counts.measured += n;
        if (row.Text(3) != "OK") counts.errors[row.Text(3)] += n;
      }
      counts.last_trial_ms = std::max(counts.last_trial_ms, row.Int(5));
    }));
  }
  std::vector<AgentTrialCounts> out;
  out.reserve(by_agent.size());
  for (auto& [key, counts] : by_agent) out.push_back(std::move(counts));
  return out;
}

}  // namespace tunefleet::store
