// absl::Status to grpc::Status: the same code and message. absl's codes are
// gRPC's canonical codes (absl/status/status.h), so the cast is exact.
#ifndef TUNEFLEET_AUTH_GRPC_STATUS_H_
#define TUNEFLEET_AUTH_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace tunefleet::auth {

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_AUTH_GRPC_STATUS_H_
