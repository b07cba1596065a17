// TuningService: the client API (proto/tunefleet/v1/tuning.proto).
#ifndef TUNEFLEET_SERVER_TUNING_SERVICE_H_
#define TUNEFLEET_SERVER_TUNING_SERVICE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "auth/grpc_status.h"
#include "server/disk_guard.h"
#include "server/job_manager.h"
#include "server/lease_scheduler.h"
#include "server/watch_hub.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.grpc.pb.h"
#include "validation/validation.h"

namespace tunefleet::server {

using auth::ToGrpc;

// The unary methods of TuningService that TuningServiceImpl serves and
// AuthorizedTuningService (auth_services.h) forwards to it once the caller
// is authorized: X(Method, Request, Response), the message types of
// tunefleet::v1.
#define TUNEFLEET_TUNING_UNARY_METHODS(X)                    \
  X(SubmitJob, SubmitJobRequest, SubmitJobResponse)          \
  X(GetJob, GetJobRequest, JobProgress)                      \
  X(ListDevices, ListDevicesRequest, ListDevicesResponse)    \
  X(QueryRecords, QueryRecordsRequest, QueryRecordsResponse) \
  X(ListJobs, ListJobsRequest, ListJobsResponse)             \
  X(CancelJob, CancelJobRequest, JobProgress)                \
  X(SubmitModelJob, SubmitModelJobRequest, SubmitModelJobResponse)

// The override of one of TUNEFLEET_TUNING_UNARY_METHODS, in a class body.
#define TUNEFLEET_TUNING_UNARY_OVERRIDE(Method, Request, Response) \
  grpc::Status Method(grpc::ServerContext* context,                \
                      const tunefleet::v1::Request* request,       \
                      tunefleet::v1::Response* response) override;

// Every call checks its request first (validation/validation.h)
// and refuses a bad one with INVALID_ARGUMENT naming the field.
// Thread-safe. gRPC reaches it through AuthorizedTuningService
// (auth_services.h), WatchJob on the callback API (Watch()).
class TuningServiceImpl final : public tunefleet::v1::TuningService::Service {
 public:
  // A caller (token) may hold `max_watch_streams` WatchJob streams at once
  // (watch_hub.h).
  TuningServiceImpl(store::Store* store, LeaseScheduler* scheduler,
                    JobManager* jobs,
                    int max_watch_streams = kDefaultMaxWatchStreams);
  static constexpr int kDefaultMaxWatchStreams = 64;

  // The unary methods (TUNEFLEET_TUNING_UNARY_METHODS):
  //   GetJob: the job's progress now. NOT_FOUND if unknown;
  //     INVALID_ARGUMENT for a job_id < 1.
  //   ListJobs: INVALID_ARGUMENT for a page_size over kMaxListedJobs or a
  //     page_token not issued for this list.
  //   QueryRecords: INVALID_ARGUMENT for a bad op, device_key, job_id,
  //     page_size (over kMaxRecordsPage) or page_token.
  //   CancelJob: NOT_FOUND, FAILED_PRECONDITION (already ended) as
  //     JobManager::Cancel; INVALID_ARGUMENT for a job_id < 1.
  //   SubmitModelJob: JobManager::SubmitModel's errors.
  TUNEFLEET_TUNING_UNARY_METHODS(TUNEFLEET_TUNING_UNARY_OVERRIDE)
  // WatchJob of `caller` (its token's name; "" without authentication):
  // streams progress on every change until the job ends; for a job not
  // live (ended, or of an earlier server run), sends its state once.
  // NOT_FOUND if unknown; INVALID_ARGUMENT for a job_id < 1;
  // RESOURCE_EXHAUSTED for a caller holding its limit of streams.
  WatchReactor* Watch(const tunefleet::v1::WatchJobRequest* request,
                      const std::string& caller);

  // Ends every WatchJob stream and refuses new ones (server shutdown).
  void Stop() { watchers_.Stop(); }
  // WatchJob streams open now.
  int watch_streams() { return watchers_.streams(); }

  // SubmitJob and SubmitModelJob refuse new work with RESOURCE_EXHAUSTED
  // while the filesystem of `db_path` is full (server/disk_guard.h), once
  // the request itself has passed validation. Call before serving; without
  // it nothing is refused for disk space.
  void GuardDisk(const std::string& db_path,
                 uint64_t min_free_bytes = DiskGuard::kDefaultMinFreeBytes) {
    disk_guard_ = std::make_unique<DiskGuard>(db_path, min_free_bytes);
  }

 private:
  // A submission: refused with `check` (the request's validation) when it
  // failed, whatever the disk holds; else runs `submit` unless the disk
  // guard refuses new work (its RESOURCE_EXHAUSTED), then tells the guard
  // how the store took it. Errors: `check`, the guard's, `submit`'s.
  absl::Status WithDiskRoom(const absl::Status& check,
                            const std::function<absl::Status()>& submit);
  // The progress of a job, live or stored. NOT_FOUND if unknown.
  absl::StatusOr<tunefleet::v1::JobProgress> CurrentProgress(int64_t job_id);
  // Adds what only the scheduler knows: the trials in flight and, for a job
  // not yet ended, why it waits (no agent of its device key connected).
  void AddFleetState(tunefleet::v1::JobProgress* progress);
  store::Store* store_;
  LeaseScheduler* scheduler_;
  JobManager* jobs_;
  std::unique_ptr<DiskGuard> disk_guard_;
  WatchHub watchers_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_TUNING_SERVICE_H_
