// A callback-API call the server refuses before it starts (a token without
// the role, a caller over its limit of streams): one reactor for any kind
// of stream.
#ifndef TUNEFLEET_SERVER_REFUSED_CALL_H_
#define TUNEFLEET_SERVER_REFUSED_CALL_H_

#include <utility>

#include "grpcpp/grpcpp.h"

namespace tunefleet::server {

// A `Reactor` (a grpc::ServerBidiReactor or ServerWriteReactor) that ends
// its call at once with `status` and deletes itself once gRPC is done with
// it (OnDone()).
template <typename Reactor>
Reactor* RefusedCall(grpc::Status status) {
  class Refused final : public Reactor {
   public:
    explicit Refused(grpc::Status s) { this->Finish(std::move(s)); }
    void OnDone() override { delete this; }
  };
  return new Refused(std::move(status));
}

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_REFUSED_CALL_H_
