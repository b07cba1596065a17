#include "dashboard/json_views.h"

#include "contract/json.h"

namespace tunefleet::dashboard {
nlohmann::json FleetJson(const data_source::FleetView& fleet) {
  nlohmann::json devices = nlohmann::json::array();
  for (const data_source::DeviceView& d : fleet.devices) {
    nlohmann::json revisions = nlohmann::json::array();
    for (const auto& r : d.driver_revisions) {
      revisions.push_back(contract::ContractJson(r));
    }
    devices.push_back({{"device_key", d.device_key},
                       {"connected_agents", d.connected_agents},
                       {"device", contract::ContractJson(d.device)},
                       {"driver_revisions", std::move(revisions)}});
  }
  nlohmann::json agents = nlohmann::json::array();
  for (const data_source::AgentView& a : fleet.agents) {
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
  return contract::ContractJson(progress);
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
    out.push_back({{"trial_id", t.trial_id()},
                   {"job_id", t.job_id()},
                   {"error", tunefleet::v1::Measurement::Error_Name(t.error())},
                   {"time_ns", t.time_ns()},
                   {"gflops", t.gflops()},
                   {"config_text", config},
                   {"agent_name", t.agent_name()},
                   {"measured_unix_ms", t.measured_unix_ms()},
                   {"error_message", t.error_message()}});
  }
  return {{"trials", out}};
}

}  // namespace tunefleet::dashboard
