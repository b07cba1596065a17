// The data of a database file alone: `tunefleet dashboard --db`, `report`,
// and `jobs`, `watch`, `query`, `devices`, `emit` and `run` with `--db`
// read through it; the server builds its model jobs' plans from it
// (server/model_measure.cc), and its live dashboard source
// (server/http_frontend.h) extends it.
#ifndef TUNEFLEET_DASHBOARD_STORE_SOURCE_H_
#define TUNEFLEET_DASHBOARD_STORE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data_source/data_source.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::dashboard {

// A DataSource over a store alone: jobs, trials and records as stored
// (progress/stored_progress.h), agents as their measured trials name them,
// nobody connected, nothing in flight (a server keeps its leases in
// memory), no cancel. Only reads. Thread-safe.
class StoreDataSource : public data_source::DataSource {
 public:
  // Reads `store`, which must outlive it.
  explicit StoreDataSource(store::Store* store) : store_(store) {}
  // Reads `store`, which it owns.
  explicit StoreDataSource(std::unique_ptr<store::Store> store)
      : store_(store.get()), owned_(std::move(store)) {}

  absl::StatusOr<data_source::FleetView> Fleet() override;
  // The devices and their driver revisions, without Fleet()'s count of
  // every agent's trials (a scan of the trials).
  absl::StatusOr<std::vector<data_source::DeviceView>> Devices() override;
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t limit) override;
  absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t job_id) override;
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t job_id, int64_t after_trial_id, int64_t limit) override;
  bool CanCancel() const override { return false; }
  // Always FAILED_PRECONDITION: a database file's jobs cannot be cancelled.
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id) override;
  // Store::QueryRecords page after page (keyset pages of trial ids; with
  // best_only, offsets into the best records).
  absl::Status Records(const data_source::RecordQuery& query,
                       const data_source::RecordPage& page) override;

  // The RecordReader reads the store answers itself (store::Store's
  // QueryRecords with best_only, ReferenceTime, TemplateSource,
  // BestRecordsOnDriver): always current, nothing kept. DeviceKeys,
  // GetDevice and DriverRevisions are DataSource's, over Devices().
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override;
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) override;
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override;
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecordsOnDriver(
      const std::string& key, const std::string& driver,
      bool first_revision) override;

 protected:
  store::Store* store_;

 private:
  std::unique_ptr<store::Store> owned_;  // null when the caller owns store_
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_STORE_SOURCE_H_
