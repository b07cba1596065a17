#include "dashboard/store_source.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "base/status_macros.h"
#include "progress/stored_progress.h"

namespace tunefleet::dashboard {
namespace {

// Records per page of Records() when the query names none, as a server's
// default page (TuningService.QueryRecords).
constexpr int64_t kRecordPage = 1000;

// The job ids whose trials make up `job_id`: a model job's tasks, else
// the job itself.
absl::StatusOr<std::vector<int64_t>> TrialJobIds(store::Store& store,
                                                 int64_t job_id) {
  if (store.GetModelJob(job_id).ok()) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> tasks,
                               store.ModelTaskJobs(job_id));
    std::vector<int64_t> ids;
    ids.reserve(tasks.size());
    for (const store::StoredJob& task : tasks) ids.push_back(task.id);
    return ids;
  }
  TUNEFLEET_RETURN_IF_ERROR(store.GetJob(job_id).status());
  return std::vector<int64_t>{job_id};
}

}  // namespace

absl::StatusOr<std::vector<data_source::DeviceView>>
StoreDataSource::Devices() {
  TUNEFLEET_ASSIGN_OR_RETURN(auto devices, store_->ListDevices());
  std::vector<data_source::DeviceView> views;
  views.reserve(devices.size());
  for (auto& [key, info] : devices) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::DriverRevision> revs,
                               store_->DriverRevisions(key));
    views.push_back({key, std::move(info), 0, std::move(revs)});
  }
  return views;
}

absl::StatusOr<data_source::FleetView> StoreDataSource::Fleet() {
  data_source::FleetView fleet;
  TUNEFLEET_ASSIGN_OR_RETURN(fleet.devices, Devices());
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::AgentTrialCounts> agents,
                             store_->AgentTrials());
  for (store::AgentTrialCounts& a : agents) {
    data_source::AgentView view;
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
  return progress::StoredJobList(*store_, limit);
}

absl::StatusOr<tunefleet::v1::JobProgress> StoreDataSource::Job(
    int64_t job_id) {
  if (absl::StatusOr<store::ModelJob> model = store_->GetModelJob(job_id);
      model.ok()) {
    return progress::StoredModelProgress(*store_, *model, /*with_tasks=*/true);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(store::StoredJob row, store_->GetJob(job_id));
  return progress::StoredProgress(*store_, row);
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

absl::Status StoreDataSource::Records(const data_source::RecordQuery& query,
                                      const data_source::RecordPage& page) {
  store::RecordFilter filter;
  filter.op = query.op;
  filter.device_key = query.device_key;
  filter.job_id = query.job_id;
  filter.best_only = query.best_only;
  filter.limit = query.page_size > 0 ? query.page_size : kRecordPage;
  while (true) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> records,
                               store_->QueryRecords(filter));
    if (!records.empty()) page(records);
    if (static_cast<int64_t>(records.size()) < filter.limit) {
      return absl::OkStatus();
    }
    filter.after_trial_id = records.back().trial_id();
    filter.offset += filter.limit;
  }
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
StoreDataSource::BestRecords(const std::string& key) {
  store::RecordFilter filter;
  filter.device_key = key;
  filter.best_only = true;
  return store_->QueryRecords(filter);
}

absl::StatusOr<std::optional<double>> StoreDataSource::ReferenceTime(
    const std::string& key, const std::string& workload,
    const std::string& template_name) {
  return store_->ReferenceTime(key, workload, template_name);
}

absl::StatusOr<std::string> StoreDataSource::TemplateSource(
    const std::string& name, int version) {
  return store_->TemplateSource(name, version);
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
StoreDataSource::BestRecordsOnDriver(const std::string& key,
                                     const std::string& driver,
                                     bool first_revision) {
  return store_->BestRecordsOnDriver(key, driver, first_revision);
}

}  // namespace tunefleet::dashboard
