// A job's trials as a recorded table (search/table.h, tunefleet CSV), with
// the metadata that lets a simulation compute the task's features:
// template, workload, device key and device info.
#ifndef TUNEFLEET_SERVER_TABLE_EXPORT_H_
#define TUNEFLEET_SERVER_TABLE_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/store.h"

namespace tunefleet::server {

// Errors: NOT_FOUND for an unknown job or a template this build lacks.
absl::StatusOr<std::string> ExportJobTable(Store& store, int64_t job_id);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TABLE_EXPORT_H_
