#include "server/revalidation.h"

#include <utility>

#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "logging/log.h"

namespace tunefleet::server {

absl::StatusOr<std::vector<int64_t>> StartRevalidation(
    store::Store& store, JobManager& jobs, const std::string& key,
    const std::string& driver_version, int revision, int top) {
  std::vector<int64_t> ids;
  if (top <= 0) return ids;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::RevalidationTask> tasks,
                             store.RevalidationTasks(key, top));
  for (store::RevalidationTask& task : tasks) {
    tunefleet::v1::SubmitJobRequest request;
    if (!google::protobuf::util::JsonStringToMessage(task.request_json,
                                                     &request)
             .ok()) {
      logging::Warn(
          "[server] re-validation of {} {}: the stored request does not "
          "parse; skipped",
          task.workload_key, task.template_name);
      continue;
    }
    request.set_device_key(key);
    absl::StatusOr<std::shared_ptr<Job>> job =
        jobs.SubmitRevalidation(request, driver_version, &task.targets);
    if (!job.ok()) {
      logging::Warn("[server] re-validation of {} {}: {}; skipped",
                    task.workload_key, task.template_name,
                    std::string(job.status().message()));
      continue;
    }
    const int64_t id = (*job)->id();
    TUNEFLEET_RETURN_IF_ERROR(
        store.AddRevalidations(key, revision, id, task.targets));
    ids.push_back(id);
  }
  return ids;
}

}  // namespace tunefleet::server
