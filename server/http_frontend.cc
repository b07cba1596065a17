#include "server/http_frontend.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/status_macros.h"
#include "server/model_progress.h"
#include "server/tracked_job.h"

namespace tunefleet::server {
namespace {

// The job ids whose trials make up `job_id`: a model job's tasks, else
// the job itself.
absl::StatusOr<std::vector<int64_t>> TrialJobIds(store::Store& store,
                                                 int64_t job_id) {
  if (store.GetModelJob(job_id).ok()) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> tasks,
                               store.ModelTaskJobs(job_id));
    std::vector<int64_t> ids;
    for (const store::StoredJob& task : tasks) ids.push_back(task.id);
    return ids;
  }
  TUNEFLEET_RETURN_IF_ERROR(store.GetJob(job_id).status());
  return std::vector<int64_t>{job_id};
}

}  // namespace

absl::StatusOr<dashboard::FleetView> StoreDataSource::Fleet() {
  dashboard::FleetView fleet;
  TUNEFLEET_ASSIGN_OR_RETURN(auto devices, store_->ListDevices());
  for (auto& [key, info] : devices) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::DriverRevision> revs,
                               store_->DriverRevisions(key));
    fleet.devices.push_back({key, std::move(info), 0, std::move(revs)});
  }
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::AgentTrialCounts> agents,
                             store_->AgentTrials());
  for (store::AgentTrialCounts& a : agents) {
    dashboard::AgentView view;
    view.name = std::move(a.agent);
    view.device_key = std::move(a.device_key);
    view.last_seen_ms = a.last_trial_ms;
    view.in_flight = a.leased;
    view.measured = a.measured;
    view.errors = std::move(a.errors);
    fleet.agents.push_back(std::move(view));
  }
  return fleet;
}

absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> StoreDataSource::Jobs(
    int64_t limit) {
  return StoredJobList(*store_, limit);
}

absl::StatusOr<tunefleet::v1::JobProgress> StoreDataSource::Job(
    int64_t job_id) {
  if (absl::StatusOr<store::ModelJob> model = store_->GetModelJob(job_id);
      model.ok()) {
    return StoredModelProgress(*store_, *model, /*with_tasks=*/true);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(store::StoredJob row, store_->GetJob(job_id));
  return StoredProgress(*store_, row);
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
StoreDataSource::Trials(int64_t job_id, int64_t after_trial_id, int64_t limit) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                             TrialJobIds(*store_, job_id));
  std::vector<tunefleet::v1::TuningRecord> out;
  for (int64_t id : ids) {
    store::RecordFilter filter;
    filter.job_id = id;
    filter.after_trial_id = after_trial_id;
    filter.limit = limit;
    filter.measured_only = true;  // a cancelled trial is no measurement
    TUNEFLEET_ASSIGN_OR_RETURN(auto records, store_->QueryRecords(filter));
    out.insert(out.end(), std::make_move_iterator(records.begin()),
               std::make_move_iterator(records.end()));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.trial_id() < b.trial_id();
  });
  if (static_cast<int64_t>(out.size()) > limit) out.resize(limit);
  return out;
}

absl::StatusOr<tunefleet::v1::JobProgress> StoreDataSource::Cancel(int64_t) {
  return absl::FailedPreconditionError(
      "a database file's jobs cannot be cancelled");
}

absl::StatusOr<dashboard::FleetView> LiveDataSource::Fleet() {
  TUNEFLEET_ASSIGN_OR_RETURN(dashboard::FleetView fleet,
                             StoreDataSource::Fleet());
  fleet.live = true;
  // In flight: the scheduler's leases (the rows stay pending while leased).
  for (dashboard::AgentView& view : fleet.agents) view.in_flight = 0;
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
  for (dashboard::DeviceView& device : fleet.devices) {
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
    TUNEFLEET_ASSIGN_OR_RETURN(progress, StoreDataSource::Job(job_id));
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
