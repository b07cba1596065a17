#include "server/http_frontend.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/status_macros.h"
#include "server/tracked_job.h"

namespace tunefleet::server {
absl::StatusOr<data_source::FleetView> LiveDataSource::Fleet() {
  TUNEFLEET_ASSIGN_OR_RETURN(data_source::FleetView fleet,
                             dashboard::StoreDataSource::Fleet());
  fleet.live = true;
  // In flight: the scheduler's leases (the rows stay pending while leased).
  for (data_source::AgentView& view : fleet.agents) view.in_flight = 0;
  const std::map<std::string, uint32_t> leases = scheduler_->LeasesByAgent();
  std::map<std::string, int> per_key;
  for (const auto& agent : scheduler_->Agents()) {
    ++per_key[agent->key()];
    auto it = std::find_if(
        fleet.agents.begin(), fleet.agents.end(), [&](const auto& view) {
          return view.name == agent->name() && view.device_key == agent->key();
        });
    if (it == fleet.agents.end()) {
      fleet.agents.push_back({});
      it = fleet.agents.end() - 1;
      it->name = agent->name();
      it->device_key = agent->key();
    }
    it->connected = true;
    if (auto l = leases.find(agent->id()); l != leases.end()) {
      it->in_flight += l->second;
    }
    it->last_seen_ms = agent->last_seen_ms();
    it->max_in_flight = agent->capacity();
  }
  for (data_source::DeviceView& device : fleet.devices) {
    device.connected_agents = per_key[device.device_key];
  }
  std::stable_sort(
      fleet.agents.begin(), fleet.agents.end(),
      [](const auto& a, const auto& b) { return a.connected > b.connected; });
  return fleet;
}

absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> LiveDataSource::Jobs(
    int64_t limit) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::JobProgress> jobs,
                             jobs_->List(limit));
  for (auto& job : jobs) scheduler_->SetInFlightTrials(&job);
  return jobs;
}

absl::StatusOr<tunefleet::v1::JobProgress> LiveDataSource::Job(int64_t job_id) {
  tunefleet::v1::JobProgress progress;
  if (std::optional<tunefleet::v1::JobProgress> known =
          jobs_->LiveOrEndedProgress(job_id)) {
    progress = *std::move(known);
  } else {
    TUNEFLEET_ASSIGN_OR_RETURN(progress,
                               dashboard::StoreDataSource::Job(job_id));
  }
  scheduler_->SetInFlightTrials(&progress);
  return progress;
}

absl::StatusOr<tunefleet::v1::JobProgress> LiveDataSource::Cancel(
    int64_t job_id) {
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::JobProgress progress,
                             jobs_->Cancel(job_id));
  scheduler_->SetInFlightTrials(&progress);
  return progress;
}

absl::StatusOr<std::unique_ptr<HttpFrontend>> HttpFrontend::Start(
    const dashboard::HttpOptions& options, store::Store* store,
    LeaseScheduler* scheduler, JobManager* jobs) {
  auto frontend = std::make_unique<HttpFrontend>(
      std::make_unique<LiveDataSource>(store, scheduler, jobs));
  TUNEFLEET_ASSIGN_OR_RETURN(
      frontend->http_,
      dashboard::HttpServer::Start(options, frontend->source_.get()));
  return frontend;
}

}  // namespace tunefleet::server
