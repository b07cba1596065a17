// A job's trials as a recorded table (search_space/table.h, tunefleet CSV),
// with the metadata that lets a simulation compute the task's features:
// template, workload, device key and device info.
#ifndef TUNEFLEET_STORE_TABLE_EXPORT_H_
#define TUNEFLEET_STORE_TABLE_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace tunefleet::store {

// Errors: NOT_FOUND for an unknown job or a template this build lacks.
absl::StatusOr<std::string> ExportJobTable(Store& store, int64_t job_id);

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_TABLE_EXPORT_H_
