// Calls of gRPC's standard services (grpc.health.v1.Health and
// grpc.reflection.v1alpha.ServerReflection) through grpc::GenericStub, with
// their few protobuf fields encoded by hand: tests speak them as a generic
// tool does, without the services' generated code (Debian ships neither
// health.proto nor reflection.proto). Messages: grpc/src/proto/grpc/health/
// v1/health.proto and grpc/src/proto/grpc/reflection/v1alpha/
// reflection.proto.
#ifndef TUNEFLEET_TESTS_SUPPORT_STANDARD_SERVICES_H_
#define TUNEFLEET_TESTS_SUPPORT_STANDARD_SERVICES_H_

#include <chrono>
#include <string>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet::testing {

// HealthCheckResponse bytes: field 1 (status), varint SERVING = 1 or
// NOT_SERVING = 2.
inline const std::string kHealthServing("\x08\x01", 2);
inline const std::string kHealthNotServing("\x08\x02", 2);

// A protobuf string field `field` holding `value` (< 128 bytes).
inline std::string StringField(int field, const std::string& value) {
  std::string out(1, static_cast<char>((field << 3) | 2));
  out += static_cast<char>(value.size());
  return out + value;
}

inline grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

inline std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const auto& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// The HealthCheckRequest of `service` ("" is the whole server).
inline std::string HealthRequest(const std::string& service) {
  return service.empty() ? "" : StringField(1, service);
}

// One unary call of `method` ("/package.Service/Method") with `request`
// bytes and the given metadata; its status, the response bytes in
// `*response`. Deadline 10 s.
inline grpc::Status GenericUnary(
    grpc::GenericStub& stub, const std::string& method,
    const std::string& request, std::string* response,
    const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(&context, method, Buffer(request), &cq);
  call->StartCall();
  grpc::ByteBuffer reply;
  grpc::Status status;
  call->Finish(&reply, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "completion queue shut");
  }
  *response = Bytes(reply);
  return status;
}

// grpc.health.v1.Health/Check of `service`.
inline grpc::Status HealthCheck(
    grpc::GenericStub& stub, const std::string& service, std::string* response,
    const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  return GenericUnary(stub, "/grpc.health.v1.Health/Check",
                      HealthRequest(service), response, metadata);
}

// One request on grpc.reflection.v1alpha.ServerReflection's stream, sent
// with no metadata; the first response's bytes ("" when none came).
inline std::string Reflect(grpc::GenericStub& stub,
                           const std::string& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(
      &context,
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  std::string bytes;
  call->StartCall(reinterpret_cast<void*>(1));
  if (step()) {
    call->Write(Buffer(request), reinterpret_cast<void*>(2));
    if (step()) {
      call->WritesDone(reinterpret_cast<void*>(3));
      if (step()) {
        grpc::ByteBuffer reply;
        call->Read(&reply, reinterpret_cast<void*>(4));
        if (step()) bytes = Bytes(reply);
      }
    }
  }
  grpc::Status status;
  context.TryCancel();
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  return bytes;
}

// ServerReflectionRequest list_services (field 7).
inline std::string ListServicesRequest() { return StringField(7, ""); }

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_STANDARD_SERVICES_H_
