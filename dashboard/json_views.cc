#include "dashboard/json_views.h"

#include "google/protobuf/util/json_util.h"

namespace tunefleet::dashboard {
namespace {

// `message` in protobuf's JSON mapping; an empty object if it cannot be
// printed (it always can: these messages have no Any fields).
nlohmann::json ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(message, &text, options)
           .ok()) {
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

nlohmann::json FleetJson(const FleetView& fleet) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceView& d : fleet.devices) {
    devices.push_back({{"device_key", d.device_key},
                       {"connected_agents", d.connected_agents},
                       {"device", ProtoJson(d.device)}});
  }
  nlohmann::json agents = nlohmann::json::array();
  for (const AgentView& a : fleet.agents) {
    agents.push_back({{"name", a.name},
                      {"device_key", a.device_key},
                      {"connected", a.connected},
                      {"last_seen_ms", a.last_seen_ms},
                      {"max_in_flight", a.max_in_flight},
                      {"in_flight", a.in_flight},
                      {"measured", a.measured},
                      {"errors", a.errors}});
  }
  return {{"live", fleet.live}, {"devices", devices}, {"agents", agents}};
}

nlohmann::json ProgressJson(const tunefleet::v1::JobProgress& progress) {
  return ProtoJson(progress);
}

nlohmann::json JobsJson(const std::vector<tunefleet::v1::JobProgress>& jobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& job : jobs) out.push_back(ProgressJson(job));
  return {{"jobs", out}};
}

nlohmann::json TrialsJson(
    const std::vector<tunefleet::v1::TuningRecord>& trials) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : trials) {
    std::string config;
    for (const auto& knob : t.config().knobs()) {
      if (!config.empty()) config += ',';
      config += knob.name() + "=" + std::to_string(knob.value());
    }
    out.push_back({{"id", t.trial_id()},
                   {"job_id", t.job_id()},
                   {"error", tunefleet::v1::Measurement::Error_Name(t.error())},
                   {"time_ns", t.time_ns()},
                   {"gflops", t.gflops()},
                   {"config", config},
                   {"agent", t.agent_name()},
                   {"measured_ms", t.measured_unix_ms()},
                   {"message", t.error_message()}});
  }
  return {{"trials", out}};
}

}  // namespace tunefleet::dashboard
