#include "cli/server_source.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "dashboard/store_source.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

using tunefleet::v1::JobProgress;
using tunefleet::v1::TuningRecord;

// The most a server sends in one page (tuning.proto).
constexpr uint32_t kMaxPageSize = 10000;
// Jobs per ListJobs page when no page size is given: fewer than the most,
// so that each page of a long history comes well within kCallDeadline.
constexpr uint32_t kJobsPage = 1000;

class EmptyRecords : public data_source::RecordReader {
 public:
  absl::StatusOr<std::vector<std::string>> DeviceKeys() override {
    return std::vector<std::string>();
  }
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override {
    return absl::NotFoundError(absl::StrCat("no device with key '", key, "'"));
  }
  absl::StatusOr<std::vector<TuningRecord>> BestRecords(
      const std::string& key) override {
    return std::vector<TuningRecord>();
  }
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string&, const std::string&, const std::string&) override {
    return std::optional<double>();
  }
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override {
    return absl::NotFoundError(name);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ServerDataSource>> ServerDataSource::Dial(
    const std::string& address, const client::ChannelFiles& files,
    uint32_t page_size, uint32_t record_page_size) {
  TUNEFLEET_ASSIGN_OR_RETURN(TuningClient tuning, DialServer(address, files));
  return std::make_unique<ServerDataSource>(std::move(tuning), page_size,
                                            record_page_size);
}

absl::StatusOr<tunefleet::v1::JobProgress> ServerDataSource::Watch(
    int64_t job_id, const data_source::ProgressUpdate& update) {
  return WatchJob(tuning_.server, job_id, update);
}

absl::StatusOr<data_source::FleetView> ServerDataSource::Fleet() {
  TUNEFLEET_ASSIGN_OR_RETURN(
      tunefleet::v1::ListDevicesResponse response,
      Call(&tunefleet::v1::TuningService::Stub::ListDevices,
           tunefleet::v1::ListDevicesRequest()));
  data_source::FleetView fleet;
  fleet.live = true;
  for (const tunefleet::v1::DeviceStatus& d : response.devices()) {
    fleet.devices.push_back(
        {d.device_key(),
         d.device(),
         static_cast<int>(d.connected_agents()),
         {d.driver_revisions().begin(), d.driver_revisions().end()}});
    for (const std::string& name : d.agent_names()) {
      data_source::AgentView agent;
      agent.name = name;
      agent.device_key = d.device_key();
      agent.connected = true;
      fleet.agents.push_back(std::move(agent));
    }
  }
  return fleet;
}

absl::StatusOr<std::vector<JobProgress>> ServerDataSource::Jobs(int64_t limit) {
  // 0 (or less): every job, as the store's list.
  const size_t wanted = limit > 0 ? static_cast<size_t>(limit)
                                  : std::numeric_limits<size_t>::max();
  tunefleet::v1::ListJobsRequest request;
  request.set_page_size(static_cast<uint32_t>(
      std::min<size_t>(page_size_ == 0 ? kJobsPage : page_size_, wanted)));
  std::vector<JobProgress> jobs;
  TUNEFLEET_RETURN_IF_ERROR(
      ForEachPage(*tuning_.stub, &tunefleet::v1::TuningService::Stub::ListJobs,
                  "ListJobs", tuning_.server, request, kCallDeadline,
                  [&](const tunefleet::v1::ListJobsResponse& page) {
                    for (const JobProgress& p : page.jobs()) {
                      if (jobs.size() < wanted) jobs.push_back(p);
                    }
                    return !page.jobs().empty() && jobs.size() < wanted;
                  }));
  return jobs;
}

absl::StatusOr<JobProgress> ServerDataSource::Job(int64_t job_id) {
  tunefleet::v1::GetJobRequest request;
  request.set_job_id(job_id);
  return Call(&tunefleet::v1::TuningService::Stub::GetJob, request);
}

absl::StatusOr<std::vector<TuningRecord>> ServerDataSource::Trials(
    int64_t job_id, int64_t after_trial_id, int64_t limit) {
  TUNEFLEET_ASSIGN_OR_RETURN(JobProgress job, Job(job_id));
  std::vector<int64_t> ids;
  if (job.has_model()) {
    for (const auto& task : job.model().task_progress()) {
      ids.push_back(task.job().job_id());
    }
  } else {
    ids.push_back(job_id);
  }
  std::vector<TuningRecord> out;
  for (int64_t id : ids) {
    if (id <= 0) continue;  // no job row (QueryRecords' 0 means every job)
    tunefleet::v1::QueryRecordsRequest request;
    request.set_job_id(id);
    request.set_page_size(kMaxPageSize);
    int64_t taken = 0;  // of this job: its first `limit` are enough
    TUNEFLEET_RETURN_IF_ERROR(ForEachPage(
        *tuning_.stub, &tunefleet::v1::TuningService::Stub::QueryRecords,
        "QueryRecords", tuning_.server, request, kCallDeadline,
        [&](const tunefleet::v1::QueryRecordsResponse& page) {
          for (const TuningRecord& r : page.records()) {
            // A cancelled trial is no measurement (as the store's reader).
            if (r.trial_id() <= after_trial_id ||
                r.error() == tunefleet::v1::Measurement::CANCELLED ||
                taken >= limit) {
              continue;
            }
            out.push_back(r);
            ++taken;
          }
          return taken < limit;
        }));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.trial_id() < b.trial_id();
  });
  if (static_cast<int64_t>(out.size()) > limit) out.resize(limit);
  return out;
}

absl::StatusOr<JobProgress> ServerDataSource::Cancel(int64_t job_id) {
  tunefleet::v1::CancelJobRequest request;
  request.set_job_id(job_id);
  return Call(&tunefleet::v1::TuningService::Stub::CancelJob, request);
}

absl::Status ServerDataSource::Records(const data_source::RecordQuery& query,
                                       const data_source::RecordPage& page) {
  tunefleet::v1::QueryRecordsRequest request;
  request.set_op(query.op);
  request.set_device_key(query.device_key);
  request.set_job_id(query.job_id);
  request.set_best_only(query.best_only);
  request.set_page_size(query.page_size != 0 ? query.page_size
                                             : record_page_size_);
  std::vector<TuningRecord> records;
  return ForEachPage(
      *tuning_.stub, &tunefleet::v1::TuningService::Stub::QueryRecords,
      "QueryRecords", tuning_.server, request, kCallDeadline,
      [&](const tunefleet::v1::QueryRecordsResponse& response) {
        records.assign(response.records().begin(), response.records().end());
        if (!records.empty()) page(records);
        return !response.records().empty();
      });
}

absl::StatusOr<std::unique_ptr<data_source::DataSource>> OpenDatabaseSource(
    const std::string& db) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                             OpenDatabase(db));
  return std::make_unique<dashboard::StoreDataSource>(std::move(store));
}

absl::StatusOr<std::unique_ptr<data_source::DataSource>> OpenDataSource(
    const SourceFlags& flags) {
  if (!flags.server.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        std::unique_ptr<ServerDataSource> source,
        ServerDataSource::Dial(flags.server, flags.connection, flags.page_size,
                               flags.record_page_size));
    return source;
  }
  return OpenDatabaseSource(flags.db);
}

std::unique_ptr<data_source::RecordReader> MakeEmptyRecords() {
  return std::make_unique<EmptyRecords>();
}

}  // namespace tunefleet::cli
