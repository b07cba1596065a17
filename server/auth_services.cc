#include "server/auth_services.h"

#include "absl/strings/str_cat.h"

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

// The status of a method whose service this server was not given.
grpc::Status NotServed(absl::string_view what) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      absl::StrCat("this server does not ", what));
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

// The unary methods: the authorizer's check, then TuningServiceImpl's.
#define TUNEFLEET_AUTHORIZED_FORWARD(rpc, Request, Response)               \
  grpc::Status AuthorizedTuningService::rpc(                               \
      grpc::ServerContext* context, const tunefleet::v1::Request* request, \
      tunefleet::v1::Response* response) {                                 \
    return Authorized(*auth_, *context, auth::k##rpc##Method, [&] {        \
      return inner_->rpc(context, request, response);                      \
    });                                                                    \
  }
TUNEFLEET_TUNING_UNARY_METHODS(TUNEFLEET_AUTHORIZED_FORWARD)
#undef TUNEFLEET_AUTHORIZED_FORWARD

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

grpc::Status AuthorizedTuningService::RunModel(
    grpc::ServerContext* context, const tunefleet::v1::RunModelRequest* request,
    tunefleet::v1::RunModelResult* response) {
  return Authorized(*auth_, *context, auth::kRunModelMethod, [&] {
    if (model_runs_ == nullptr) return NotServed("run models");
    return model_runs_->Run(context, *request, response);
  });
}

grpc::Status AuthorizedTuningService::ExportRecords(
    grpc::ServerContext* context,
    const tunefleet::v1::ExportRecordsRequest* request,
    grpc::ServerWriter<tunefleet::v1::BundleChunk>* writer) {
  return Authorized(*auth_, *context, auth::kExportRecordsMethod, [&] {
    if (bundles_ == nullptr) return NotServed("export record bundles");
    return bundles_->Export(*request, writer);
  });
}

grpc::Status AuthorizedTuningService::ImportRecords(
    grpc::ServerContext* context,
    grpc::ServerReader<tunefleet::v1::BundleChunk>* reader,
    tunefleet::v1::ImportRecordsResponse* response) {
  return Authorized(*auth_, *context, auth::kImportRecordsMethod, [&] {
    if (bundles_ == nullptr) return NotServed("import record bundles");
    return bundles_->Import(reader, response);
  });
}

}  // namespace tunefleet::server
