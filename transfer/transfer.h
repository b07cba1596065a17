// Transfer learning (docs/ARCHITECTURE.md, Search and cost model): the results
// of earlier tasks that a new task's model trains on before (and along with)
// its own, as AutoTVM's transfer learning of cost models does.
#ifndef TUNEFLEET_TRANSFER_TRANSFER_H_
#define TUNEFLEET_TRANSFER_TRANSFER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"
#include "search/strategy.h"
#include "store/store.h"

namespace tunefleet::transfer {

// Trial rows TransferHistory reads, at most, per row it keeps: jobs without
// an OK trial and configs recorded under other knobs are read but dropped.
inline constexpr size_t kHistoryReadFactor = 2;

// Earlier records of template `tmpl` (any workload, any device key) as one
// training group per job, newest jobs first, up to about `max_rows` rows.
// Reads at most kHistoryReadFactor * max_rows trial rows from the store
// (Store::HistoryRecords: an index walk of the template's jobs, then of
// each job's trials), whatever the database's size.
// Labels are throughput relative to the job's best (failed trials 0);
// features come from TaskFeatures with each record's own workload and
// device. Jobs without a successful trial are left out.
absl::StatusOr<std::vector<search::HistoryGroup>> TransferHistory(
    store::Store& store, const templates::KernelTemplate& tmpl,
    size_t max_rows);

}  // namespace tunefleet::transfer

#endif  // TUNEFLEET_TRANSFER_TRANSFER_H_
