#include "server/tuning_service.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "proto/names.h"
#include "store/store.h"

namespace tunefleet::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

grpc::Status TuningServiceImpl::SubmitJob(
    grpc::ServerContext*, const tunefleet::v1::SubmitJobRequest* request,
    tunefleet::v1::SubmitJobResponse* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateSubmitJobRequest(*request));
    TUNEFLEET_ASSIGN_OR_RETURN(std::shared_ptr<Job> job,
                               jobs_->Submit(*request));
    response->set_job_id(job->id());
    response->set_device_key(job->spec().device_key);
    response->set_space_size(job->space_size());
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::WatchJob(
    grpc::ServerContext* context, const tunefleet::v1::WatchJobRequest* request,
    grpc::ServerWriter<tunefleet::v1::JobProgress>* writer) {
  if (absl::Status s = validation::ValidateWatchJobRequest(*request); !s.ok()) {
    return ToGrpc(s);
  }
  std::shared_ptr<Job> job = jobs_->Find(request->job_id());
  if (job == nullptr) {
    // A job of an earlier server run: its stored state, once.
    return ToGrpc([&]() -> absl::Status {
      TUNEFLEET_ASSIGN_OR_RETURN(store::Job row,
                                 store_->GetJob(request->job_id()));
      TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::JobProgress progress,
                                 StoredProgress(*store_, row));
      writer->Write(progress);
      return absl::OkStatus();
    }());
  }
  uint64_t version = 0;
  tunefleet::v1::JobProgress progress = job->Progress();
  if (!writer->Write(progress)) return grpc::Status::OK;
  while (!proto::IsFinalJobState(progress.state()) && !context->IsCancelled() &&
         !stopping_) {
    if (job->WaitForUpdate(&version, absl::Milliseconds(500), &progress) &&
        !writer->Write(progress)) {
      break;
    }
  }
  return grpc::Status::OK;
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
  for (auto& [key, status] : by_key) *response->add_devices() = status;
  return grpc::Status::OK;
}

grpc::Status TuningServiceImpl::QueryRecords(
    grpc::ServerContext*, const tunefleet::v1::QueryRecordsRequest* request,
    tunefleet::v1::QueryRecordsResponse* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(
        validation::ValidateQueryRecordsRequest(*request));
    store::RecordFilter filter;
    filter.op = request->op();
    filter.device_key = request->device_key();
    filter.job_id = request->job_id();
    filter.best_only = request->best_only();
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> records,
                               store_->QueryRecords(filter));
    for (auto& r : records) *response->add_records() = std::move(r);
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::ListJobs(
    grpc::ServerContext*, const tunefleet::v1::ListJobsRequest* request,
    tunefleet::v1::ListJobsResponse* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateListJobsRequest(*request));
    TUNEFLEET_ASSIGN_OR_RETURN(
        auto jobs, jobs_->List(request->limit() == 0 ? 50 : request->limit()));
    for (auto& j : jobs) *response->add_jobs() = std::move(j);
    return absl::OkStatus();
  }());
}

grpc::Status TuningServiceImpl::CancelJob(
    grpc::ServerContext*, const tunefleet::v1::CancelJobRequest* request,
    tunefleet::v1::JobProgress* response) {
  return ToGrpc([&]() -> absl::Status {
    TUNEFLEET_RETURN_IF_ERROR(validation::ValidateCancelJobRequest(*request));
    TUNEFLEET_ASSIGN_OR_RETURN(*response, jobs_->Cancel(request->job_id()));
    return absl::OkStatus();
  }());
}

}  // namespace tunefleet::server
