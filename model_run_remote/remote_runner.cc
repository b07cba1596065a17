// RemoteRunner: a model plan run by an agent, through the server
// (remote_runner.h).
#include "model_run_remote/remote_runner.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/rpc_error.h"
#include "grpcpp/grpcpp.h"
#include "model_run_remote/run_messages.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::model_run_remote {
namespace {

class RemoteRunner : public model_run::ModelRunner {
 public:
  RemoteRunner(client::ServerConnection server,
               std::unique_ptr<tunefleet::v1::TuningService::Stub> stub,
               model_run::RunnerDevice device, uint32_t timeout_ms)
      : server_(std::move(server)),
        stub_(std::move(stub)),
        device_(std::move(device)),
        timeout_ms_(timeout_ms) {}

  const model_run::RunnerDevice& device() const override { return device_; }

  absl::StatusOr<model_run::RunResult> Run(
      const model_run::RunRequest& request) override {
    if (!request.image_views) {
      return absl::InvalidArgumentError(
          "image views off: an agent's run has no such choice (it views "
          "tensors as images where its device can); run on this machine "
          "with --local to compare");
    }
    model_run::RunRequest keyed = request;
    if (keyed.device_key.empty()) keyed.device_key = device_.device_key;
    tunefleet::v1::RunModelRequest message = ToProto(keyed, {}, timeout_ms_);
    // The runs' key: a plan checked against another key is still run by
    // an agent of this runner's key.
    message.set_device_key(device_.device_key);
    grpc::ClientContext context;
    // A little beyond the server's own deadline, so that its
    // DEADLINE_EXCEEDED (which says what it waited for) arrives first.
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(timeout_ms_) +
                         std::chrono::seconds(10));
    tunefleet::v1::RunModelResult result;
    const grpc::Status s = stub_->RunModel(&context, message, &result);
    if (!s.ok()) return client::RpcError(s, server_.address, server_.tls());
    absl::StatusOr<model_run::RunResult> r = FromProto(result);
    if (!r.ok()) return r.status();
    r->device.device_key = device_.device_key;
    r->device.libraries = device_.libraries;
    return r;
  }

 private:
  client::ServerConnection server_;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
  model_run::RunnerDevice device_;
  uint32_t timeout_ms_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> OpenRemoteRunner(
    const client::ServerConnection& server,
    const RemoteRunnerOptions& options) {
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(server));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  tunefleet::v1::ListDevicesResponse devices;
  const grpc::Status s = stub->ListDevices(&context, {}, &devices);
  if (!s.ok()) return client::RpcError(s, server.address, server.tls());
  std::vector<const tunefleet::v1::DeviceStatus*> connected;
  const tunefleet::v1::DeviceStatus* chosen = nullptr;
  for (const tunefleet::v1::DeviceStatus& d : devices.devices()) {
    if (d.connected_agents() == 0) continue;
    connected.push_back(&d);
    if (d.device_key() == options.device_key) chosen = &d;
  }
  std::vector<std::string> keys;
  for (const auto* d : connected) {
    keys.push_back(
        absl::StrCat(d->device_key(), " (", d->connected_agents(),
                     d->connected_agents() == 1 ? " agent)" : " agents)"));
  }
  const std::string listed =
      keys.empty() ? std::string("no agent is connected")
                   : absl::StrCat("connected: ", absl::StrJoin(keys, ", "));
  if (options.device_key.empty()) {
    if (connected.size() == 1) {
      chosen = connected[0];
    } else if (connected.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "no agent is connected to the server at ", server.address,
          " to run the model on: start tunefleet-agent --server ",
          server.address, " on the device"));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "several device keys have agents on the server at ", server.address,
          " (", listed, "): pass --device-key to pick one"));
    }
  }
  if (chosen == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "no agent of device key '", options.device_key,
        "' is connected to the server at ", server.address, " (", listed,
        "): start tunefleet-agent --server ", server.address, " --key ",
        options.device_key, " on the device"));
  }
  model_run::RunnerDevice device;
  device.device_key = chosen->device_key();
  device.device_name = chosen->device().device_name();
  device.device_vendor = chosen->device().vendor();
  for (const std::string& lib : chosen->device().libraries()) {
    device.libraries.push_back(lib.substr(0, lib.find(' ')));
  }
  return std::unique_ptr<model_run::ModelRunner>(new RemoteRunner(
      server, std::move(stub), std::move(device), options.timeout_ms));
}

}  // namespace tunefleet::model_run_remote
