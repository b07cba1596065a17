// The gRPC services as the network sees them: each call is checked by the
// Authorizer (auth/authorizer.h) against its method's role before it
// reaches AgentServiceImpl or TuningServiceImpl.
//
// Why wrappers and not an interceptor: in gRPC 1.51 (Debian 12) a server
// interceptor cannot end a call with a status before the handler runs, and
// an AuthMetadataProcessor is refused on plaintext ports, which the
// embedded default and --insecure use. A wrapper checks every method in
// one place, whatever the transport.
#ifndef TUNEFLEET_SERVER_AUTH_SERVICES_H_
#define TUNEFLEET_SERVER_AUTH_SERVICES_H_

#include "auth/authorizer.h"
#include "server/agent_service.h"
#include "server/model_run_service.h"
#include "server/record_bundles.h"
#include "server/tuning_service.h"
#include "tunefleet/v1/agent.grpc.pb.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::server {

// AgentService/Connect for tokens of role agent (the callback API, as
// AgentServiceImpl: a refused call ends at once with the authorizer's
// status). Thread-safe; `inner` and `auth` must outlive it.
class AuthorizedAgentService final
    : public tunefleet::v1::AgentService::CallbackService {
 public:
  AuthorizedAgentService(AgentServiceImpl* inner, const auth::Authorizer* auth)
      : inner_(inner), auth_(auth) {}

  AgentReactor* Connect(grpc::CallbackServerContext* context) override;

 private:
  AgentServiceImpl* inner_;
  const auth::Authorizer* auth_;
};

// TuningService: SubmitJob, SubmitModelJob and CancelJob for tuners, the rest
// for readers and tuners. WatchJob on the callback API (no thread per
// stream; TuningServiceImpl::Watch), the rest synchronous. Thread-safe;
// `inner` and `auth` must outlive it.
class AuthorizedTuningService final
    : public tunefleet::v1::TuningService::WithCallbackMethod_WatchJob<
          tunefleet::v1::TuningService::Service> {
 public:
  AuthorizedTuningService(TuningServiceImpl* inner,
                          const auth::Authorizer* auth)
      : inner_(inner), auth_(auth) {}

  // Forwarded to TuningServiceImpl.
  TUNEFLEET_TUNING_UNARY_METHODS(TUNEFLEET_TUNING_UNARY_OVERRIDE)
  WatchReactor* WatchJob(
      grpc::CallbackServerContext* context,
      const tunefleet::v1::WatchJobRequest* request) override;
  // For tuners: ModelRunRouter::Run (UNIMPLEMENTED while no router is set).
  grpc::Status RunModel(grpc::ServerContext* context,
                        const tunefleet::v1::RunModelRequest* request,
                        tunefleet::v1::RunModelResult* response) override;
  // Record bundles (docs/BUNDLES.md): ExportRecords for readers,
  // ImportRecords for tuners; UNIMPLEMENTED while no RecordBundles is set.
  grpc::Status ExportRecords(
      grpc::ServerContext* context,
      const tunefleet::v1::ExportRecordsRequest* request,
      grpc::ServerWriter<tunefleet::v1::BundleChunk>* writer) override;
  grpc::Status ImportRecords(
      grpc::ServerContext* context,
      grpc::ServerReader<tunefleet::v1::BundleChunk>* reader,
      tunefleet::v1::ImportRecordsResponse* response) override;
  // Set before serving; must outlive the gRPC server.
  void set_model_runs(ModelRunRouter* model_runs) { model_runs_ = model_runs; }
  void set_record_bundles(const RecordBundles* bundles) { bundles_ = bundles; }

 private:
  TuningServiceImpl* inner_;
  const auth::Authorizer* auth_;
  ModelRunRouter* model_runs_ = nullptr;
  const RecordBundles* bundles_ = nullptr;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_AUTH_SERVICES_H_
