#include "server/tuning_service.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/names.h"
#include "progress/stored_progress.h"
#include "server/page_token.h"
#include "store/store.h"
#include "validation/validation.h"

namespace tunefleet::server {

TuningServiceImpl::TuningServiceImpl(store::Store* store,
                                     LeaseScheduler* scheduler,
                                     JobManager* jobs, int max_watch_streams)
    : store_(store),
      scheduler_(scheduler),
      jobs_(jobs),
      watchers_(
          jobs, [this](int64_t id) { return CurrentProgress(id); },
          [this](tunefleet::v1::JobProgress* p) { AddFleetState(p); },
          max_watch_streams) {}

absl::Status TuningServiceImpl::WithDiskRoom(
    const absl::Status& check, const std::function<absl::Status()>& submit) {
  // A malformed request is refused as such whatever the disk holds: the
  // check comes before the disk gate.
  TUNEFLEET_RETURN_IF_ERROR(check);
  if (disk_guard_) TUNEFLEET_RETURN_IF_ERROR(disk_guard_->Check());
  absl::Status submitted = submit();
  if (disk_guard_) disk_guard_->Note(submitted);
  return submitted;
}

grpc::Status TuningServiceImpl::SubmitJob(
    grpc::ServerContext*, const tunefleet::v1::SubmitJobRequest* request,
    tunefleet::v1::SubmitJobResponse* response) {
  // (JobManager::Submit checks the request too.)
  return ToGrpc(WithDiskRoom(
      validation::ValidateSubmitJobRequest(*request), [&]() -> absl::Status {
        TUNEFLEET_ASSIGN_OR_RETURN(std::shared_ptr<Job> job,
                                   jobs_->Submit(*request));
        response->set_job_id(job->id());
        response->set_device_key(job->spec().device_key);
        response->set_space_size(job->space_size());
        return absl::OkStatus();
      }));
}

grpc::Status TuningServiceImpl::SubmitModelJob(
    grpc::ServerContext*, const tunefleet::v1::SubmitModelJobRequest* request,
    tunefleet::v1::SubmitModelJobResponse* response) {
  return ToGrpc(WithDiskRoom(
      validation::ValidateSubmitModelJobRequest(*request),
      [&] { return jobs_->SubmitModel(*request, response).status(); }));
}

absl::StatusOr<tunefleet::v1::JobProgress> TuningServiceImpl::CurrentProgress(
    int64_t job_id) {
  tunefleet::v1::JobProgress progress;
  if (std::optional<tunefleet::v1::JobProgress> known =
          jobs_->LiveOrEndedProgress(job_id)) {
    progress = *std::move(known);
  } else if (absl::StatusOr<store::ModelJob> model =
                 store_->GetModelJob(job_id);
             model.ok()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        progress,
        progress::StoredModelProgress(*store_, *model, /*with_tasks=*/true));
  } else {
    // A job of an earlier server run: its stored state.
    TUNEFLEET_ASSIGN_OR_RETURN(store::StoredJob row, store_->GetJob(job_id));
    TUNEFLEET_ASSIGN_OR_RETURN(progress,
                               progress::StoredProgress(*store_, row));
  }
  AddFleetState(&progress);
  return progress;
}

void TuningServiceImpl::AddFleetState(tunefleet::v1::JobProgress* progress) {
  progress->clear_waiting_reason();
  scheduler_->SetInFlightTrials(progress);
  if (contract::IsFinalJobState(progress->state())) return;
  std::map<std::string, int> agents_by_key;
  for (const auto& agent : scheduler_->Agents()) ++agents_by_key[agent->key()];
  if (agents_by_key.contains(progress->device_key())) return;
  std::vector<std::string> keys;
  keys.reserve(agents_by_key.size());
  for (const auto& [key, count] : agents_by_key) {
    keys.push_back(
        absl::StrCat(key, " (", count, " agent", count > 1 ? "s" : "", ")"));
  }
  progress->set_waiting_reason(absl::StrCat(
      "no agent of device key '", progress->device_key(), "' is connected; ",
      keys.empty() ? "no agent is connected at all"
                   : absl::StrCat("connected: ", absl::StrJoin(keys, ", ")),
      "; start `tunefleet-agent --server ... --key ", progress->device_key(),
      "` on that device"));
}

WatchReactor* TuningServiceImpl::Watch(
    const tunefleet::v1::WatchJobRequest* request, const std::string& caller) {
  if (absl::Status s = validation::ValidateWatchJobRequest(*request); !s.ok()) {
    return RefusedWatchStream(ToGrpc(s));
  }
  return watchers_.Watch(request->job_id(), caller);
}

grpc::Status TuningServiceImpl::GetJob(
    grpc::ServerContext*, const tunefleet::v1::GetJobRequest* request,
    tunefleet::v1::JobProgress* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateGetJobRequest(*request));
    TUNEFLEET_ASSIGN_OR_RETURN(*response, CurrentProgress(request->job_id()));
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::ListDevices(
    grpc::ServerContext*, const tunefleet::v1::ListDevicesRequest*,
    tunefleet::v1::ListDevicesResponse* response) {
  auto known = store_->ListDevices();
  if (!known.ok()) return ToGrpc(known.status());
  std::map<std::string, tunefleet::v1::DeviceStatus> by_key;
  for (auto& [key, info] : *known) {
    by_key[key].set_device_key(key);
    *by_key[key].mutable_device() = info;
  }
  for (const auto& agent : scheduler_->Agents()) {
    tunefleet::v1::DeviceStatus& s = by_key[agent->key()];
    s.set_device_key(agent->key());
    if (!s.has_device()) *s.mutable_device() = agent->device();
    s.set_connected_agents(s.connected_agents() + 1);
    s.add_agent_names(agent->name());
  }
  for (auto& [key, status] : by_key) {
    auto revisions = store_->DriverRevisions(key);
    if (!revisions.ok()) return ToGrpc(revisions.status());
    for (auto& r : *revisions) *status.add_driver_revisions() = std::move(r);
    *response->add_devices() = status;
  }
  return grpc::Status::OK;
}

grpc::Status TuningServiceImpl::QueryRecords(
    grpc::ServerContext*, const tunefleet::v1::QueryRecordsRequest* request,
    tunefleet::v1::QueryRecordsResponse* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(
        validation::ValidateQueryRecordsRequest(*request));
    // With best_only the page starts at an offset, else after a trial id.
    const absl::string_view list = request->best_only() ? "best" : "records";
    TUNEFLEET_ASSIGN_OR_RETURN(const int64_t start,
                               ParsePageToken(request->page_token(), list));
    const int64_t page_size =
        PageSize(request->page_size(), validation::kDefaultRecordsPage);
    store::RecordFilter filter;
    filter.op = request->op();
    filter.device_key = request->device_key();
    filter.job_id = request->job_id();
    filter.best_only = request->best_only();
    filter.limit = page_size + 1;  // one more tells whether a page follows
    (request->best_only() ? filter.offset : filter.after_trial_id) = start;
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> records,
                               store_->QueryRecords(filter));
    if (const auto* last = TrimToPage(records, page_size)) {
      response->set_next_page_token(MakePageToken(
          list, request->best_only() ? start + page_size : last->trial_id()));
    }
    for (auto& r : records) *response->add_records() = std::move(r);
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::ListJobs(
    grpc::ServerContext*, const tunefleet::v1::ListJobsRequest* request,
    tunefleet::v1::ListJobsResponse* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateListJobsRequest(*request));
    // Newest first: the next page holds the jobs below the last id sent.
    TUNEFLEET_ASSIGN_OR_RETURN(const int64_t before_id,
                               ParsePageToken(request->page_token(), "jobs"));
    const int64_t page_size =
        PageSize(request->page_size(), validation::kDefaultJobsPage);
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::JobProgress> jobs,
                               jobs_->List(page_size + 1, before_id));
    if (const auto* last = TrimToPage(jobs, page_size)) {
      response->set_next_page_token(MakePageToken("jobs", last->job_id()));
    }
    for (auto& j : jobs) {
      AddFleetState(&j);
      *response->add_jobs() = std::move(j);
    }
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::CancelJob(
    grpc::ServerContext*, const tunefleet::v1::CancelJobRequest* request,
    tunefleet::v1::JobProgress* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateCancelJobRequest(*request));
    TUNEFLEET_ASSIGN_OR_RETURN(*response, jobs_->Cancel(request->job_id()));
    // The trials agents still hold: their results may land after this.
    AddFleetState(response);
    return absl::OkStatus();
  }());
}

}  // namespace tunefleet::server
