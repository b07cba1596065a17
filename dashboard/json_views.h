// The dashboard's JSON API bodies (dashboard/http_server.h): what the
// pages (dashboard/web/app.js) read. The contract's messages (JobProgress,
// DeviceInfo) are contract::ContractJson, the one JSON the CLI's --json
// prints too (contract/json.h, docs/JSON.md); trials are compact rows with
// the contract's field names.
#ifndef TUNEFLEET_DASHBOARD_JSON_VIEWS_H_
#define TUNEFLEET_DASHBOARD_JSON_VIEWS_H_

#include <string>
#include <vector>

#include "data_source/data_source.h"
#include "nlohmann/json.hpp"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::dashboard {

// {"live", "devices": [{"device_key", "connected_agents", "device",
//  "driver_revisions": [DriverRevision as the contract's JSON]}],
//  "agents": [{"name", "device_key", "connected", "last_seen_ms",
//  "max_in_flight", "in_flight", "measured", "errors": {code: n}}]}
nlohmann::json FleetJson(const data_source::FleetView& fleet);
// contract::ContractJson(progress): the same object `tunefleet jobs --json`,
// `watch --json` and `cancel --json` print.
nlohmann::json ProgressJson(const tunefleet::v1::JobProgress& progress);
// {"jobs": [ProgressJson...]}
nlohmann::json JobsJson(const std::vector<tunefleet::v1::JobProgress>& jobs);
// {"trials": [{"trial_id", "job_id", "error", "time_ns", "gflops",
//  "config_text": "MWG=64,NWG=64,...", "agent_name", "measured_unix_ms",
//  "error_message"}]}: one row per measured trial (TuningRecord's fields),
//  its config as text in the template's knob order.
nlohmann::json TrialsJson(
    const std::vector<tunefleet::v1::TuningRecord>& trials);

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_JSON_VIEWS_H_
