#include "server/auth_services.h"

namespace tunefleet::server {

namespace {

// Runs `call` only when the caller's token allows `method`.
template <typename Call>
grpc::Status Authorized(const auth::Authorizer& auth,
                        const grpc::ServerContext& context,
                        absl::string_view method, Call call) {
  if (grpc::Status status = auth.Check(context, method); !status.ok()) {
    return status;
  }
  return call();
}

}  // namespace

AgentReactor* AuthorizedAgentService::Connect(
    grpc::CallbackServerContext* context) {
  if (grpc::Status status = auth_->Check(*context, auth::kConnectMethod);
      !status.ok()) {
    return RefusedAgentStream(std::move(status));
  }
  return inner_->Connect(context);
}

grpc::Status AuthorizedTuningService::SubmitJob(
    grpc::ServerContext* context,
    const tunefleet::v1::SubmitJobRequest* request,
    tunefleet::v1::SubmitJobResponse* response) {
  return Authorized(*auth_, *context, auth::kSubmitJobMethod, [&] {
    return inner_->SubmitJob(context, request, response);
  });
}

WatchReactor* AuthorizedTuningService::WatchJob(
    grpc::CallbackServerContext* context,
    const tunefleet::v1::WatchJobRequest* request) {
  std::string caller;
  if (grpc::Status status =
          auth_->Check(*context, auth::kWatchJobMethod, &caller);
      !status.ok()) {
    return RefusedWatchStream(std::move(status));
  }
  return inner_->Watch(request, caller);
}

grpc::Status AuthorizedTuningService::ListDevices(
    grpc::ServerContext* context,
    const tunefleet::v1::ListDevicesRequest* request,
    tunefleet::v1::ListDevicesResponse* response) {
  return Authorized(*auth_, *context, auth::kListDevicesMethod, [&] {
    return inner_->ListDevices(context, request, response);
  });
}

grpc::Status AuthorizedTuningService::QueryRecords(
    grpc::ServerContext* context,
    const tunefleet::v1::QueryRecordsRequest* request,
    tunefleet::v1::QueryRecordsResponse* response) {
  return Authorized(*auth_, *context, auth::kQueryRecordsMethod, [&] {
    return inner_->QueryRecords(context, request, response);
  });
}

grpc::Status AuthorizedTuningService::GetJob(
    grpc::ServerContext* context, const tunefleet::v1::GetJobRequest* request,
    tunefleet::v1::JobProgress* response) {
  return Authorized(*auth_, *context, auth::kGetJobMethod,
                    [&] { return inner_->GetJob(context, request, response); });
}

grpc::Status AuthorizedTuningService::ListJobs(
    grpc::ServerContext* context, const tunefleet::v1::ListJobsRequest* request,
    tunefleet::v1::ListJobsResponse* response) {
  return Authorized(*auth_, *context, auth::kListJobsMethod, [&] {
    return inner_->ListJobs(context, request, response);
  });
}

grpc::Status AuthorizedTuningService::CancelJob(
    grpc::ServerContext* context,
    const tunefleet::v1::CancelJobRequest* request,
    tunefleet::v1::JobProgress* response) {
  return Authorized(*auth_, *context, auth::kCancelJobMethod, [&] {
    return inner_->CancelJob(context, request, response);
  });
}

grpc::Status AuthorizedTuningService::SubmitModelJob(
    grpc::ServerContext* context,
    const tunefleet::v1::SubmitModelJobRequest* request,
    tunefleet::v1::SubmitModelJobResponse* response) {
  return Authorized(*auth_, *context, auth::kSubmitModelJobMethod, [&] {
    return inner_->SubmitModelJob(context, request, response);
  });
}

grpc::Status AuthorizedTuningService::RunModel(
    grpc::ServerContext* context, const tunefleet::v1::RunModelRequest* request,
    tunefleet::v1::RunModelResult* response) {
  return Authorized(*auth_, *context, auth::kRunModelMethod, [&] {
    if (model_runs_ == nullptr) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "this server does not run models");
    }
    return model_runs_->Run(context, *request, response);
  });
}

grpc::Status AuthorizedTuningService::ExportRecords(
    grpc::ServerContext* context,
    const tunefleet::v1::ExportRecordsRequest* request,
    grpc::ServerWriter<tunefleet::v1::BundleChunk>* writer) {
  return Authorized(*auth_, *context, auth::kExportRecordsMethod, [&] {
    if (bundles_ == nullptr) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "this server does not export record bundles");
    }
    return bundles_->Export(*request, writer);
  });
}

grpc::Status AuthorizedTuningService::ImportRecords(
    grpc::ServerContext* context,
    grpc::ServerReader<tunefleet::v1::BundleChunk>* reader,
    tunefleet::v1::ImportRecordsResponse* response) {
  return Authorized(*auth_, *context, auth::kImportRecordsMethod, [&] {
    if (bundles_ == nullptr) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "this server does not import record bundles");
    }
    return bundles_->Import(reader, response);
  });
}

}  // namespace tunefleet::server
