// A gRPC server interceptor that times every call the server answers and
// records it in ServerMetrics::ObserveRpc (tunefleet_rpc_duration_seconds
// by method and status code). Register with
// ServerBuilder::experimental().SetInterceptorCreators().
#ifndef TUNEFLEET_METRICS_RPC_INTERCEPTOR_H_
#define TUNEFLEET_METRICS_RPC_INTERCEPTOR_H_

#include <memory>
#include <string>

#include "grpcpp/support/server_interceptor.h"
#include "grpcpp/support/status.h"
#include "metrics/server_metrics.h"

namespace tunefleet::metrics {

// The status code's name as gRPC spells it ("OK", "NOT_FOUND", ...);
// "UNKNOWN_CODE" for a number outside the 17 codes.
std::string GrpcCodeName(grpc::StatusCode code);

// Creates one timing interceptor per call. `metrics` must outlive the
// gRPC server the factory is registered with. A call's time runs from its
// interceptor's creation (the call's arrival) to the status the server
// sends; a call that ends without sending one (the client went away) is
// recorded as CANCELLED when gRPC destroys it.
class RpcMetricsInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsInterceptorFactory(ServerMetrics* metrics)
      : metrics_(metrics) {}
  // gRPC takes ownership of the returned interceptor.
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ServerMetrics* const metrics_;
};

}  // namespace tunefleet::metrics

#endif  // TUNEFLEET_METRICS_RPC_INTERCEPTOR_H_
