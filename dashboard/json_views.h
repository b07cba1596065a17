// The dashboard's JSON API bodies (dashboard/http_server.h): what the
// pages (dashboard/web/app.js) read. Protobuf messages (JobProgress,
// DeviceInfo) are in protobuf's JSON mapping with the proto field names
// (int64 as strings, enums by name); trials are compact rows.
#ifndef TUNEFLEET_DASHBOARD_JSON_VIEWS_H_
#define TUNEFLEET_DASHBOARD_JSON_VIEWS_H_

#include <string>
#include <vector>

#include "dashboard/data_source.h"
#include "nlohmann/json.hpp"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::dashboard {

// {"live", "devices": [{"device_key", "connected_agents", "device"}],
//  "agents": [{"name", "device_key", "connected", "last_seen_ms",
//  "max_in_flight", "in_flight", "measured", "errors": {code: n}}]}
nlohmann::json FleetJson(const FleetView& fleet);
// A JobProgress in protobuf's JSON mapping.
nlohmann::json ProgressJson(const tunefleet::v1::JobProgress& progress);
// {"jobs": [ProgressJson...]}
nlohmann::json JobsJson(const std::vector<tunefleet::v1::JobProgress>& jobs);
// {"trials": [{"id", "job_id", "error", "time_ns", "gflops", "config":
//  "MWG=64,NWG=64,...", "agent", "measured_ms", "message"}]}: one row per
// trial, its config as text in the template's knob order.
nlohmann::json TrialsJson(
    const std::vector<tunefleet::v1::TuningRecord>& trials);

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_JSON_VIEWS_H_
