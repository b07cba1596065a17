// What tunefleet's readers read, behind one interface: the web dashboard
// and the CLI's `jobs`, `watch`, `query`, `devices`, `cancel`, `report` and
// `dashboard` (jobs, trials, the fleet, records) and the library emitter,
// `emit` and `run` (a device key's best records, RecordReader). Sources:
//
//   dashboard/store_source.h  a database file (StoreDataSource); the
//                             daemon's live source (server/http_frontend.h)
//                             extends it with its agents and running jobs
//   cli/server_source.h       a tunefleet-server's TuningService (gRPC)
//
//   DataSource --Jobs, Job, Trials, Fleet, Records--> dashboard pages, CLI
//        |
//        +-- RecordReader --BestRecords, ReferenceTime, ...--> emitter,
//                                                     plan_builder
//
// RecordReader alone is what the emitter needs, so that a test or a
// benchmark can hand it a few records without a job history.
#ifndef TUNEFLEET_DATA_SOURCE_DATA_SOURCE_H_
#define TUNEFLEET_DATA_SOURCE_DATA_SOURCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::data_source {

// One agent on the fleet page.
struct AgentView {
  std::string name;        // the agent's name (tunefleet-agent --name)
  std::string device_key;  // the key it measures for
  bool connected = false;  // connected to the daemon now (live only)
  // Unix ms the daemon last heard from it (its heartbeat) when connected;
  // else its latest trial lease or result as stored; 0: unknown.
  int64_t last_seen_ms = 0;
  uint32_t max_in_flight = 0;  // its capacity when connected; else 0
  int64_t in_flight = 0;       // trials leased to it and not answered
  int64_t measured = 0;        // trials it measured
  std::map<std::string, int64_t> errors;  // measured trials by error code
};

// One device key on the fleet page.
struct DeviceView {
  std::string device_key;
  tunefleet::v1::DeviceInfo device;  // as its latest agent reported it
  int connected_agents = 0;
  // The key's driver revisions, oldest first, with their re-validation
  // outcome counts (docs/DRIVER_DRIFT.md); empty where none is stored.
  std::vector<tunefleet::v1::DriverRevision> driver_revisions;
};

struct FleetView {
  bool live = false;  // false: from a database file, nobody is connected
  std::vector<DeviceView> devices;
  std::vector<AgentView> agents;
};

// Which tuning records DataSource::Records reads: TuningService.
// QueryRecords' filter (tuning.proto), the same over a database file.
struct RecordQuery {
  std::string op;          // e.g. "gemm"; "": every op
  std::string device_key;  // "": every device key
  int64_t job_id = 0;      // 0: every job
  bool best_only = true;   // the best record of each (device key, workload)
  // Records per page, 1 .. 10,000; 0: the source's default (a database
  // file's: 1,000; a server source's: its record page size, else the
  // server's default).
  uint32_t page_size = 0;
};

// A job's progress as a watch reads it (DataSource::Watch).
using ProgressUpdate = std::function<void(const tunefleet::v1::JobProgress&)>;

// One page of tuning records, in the order the source reads them.
using RecordPage =
    std::function<void(const std::vector<tunefleet::v1::TuningRecord>&)>;

// How often DataSource::Watch's default reads a job again.
inline constexpr absl::Duration kWatchPoll = absl::Seconds(1);

// Where the emitter reads what it emits (emitter/emitter.h), and
// plan_builder a model's plan: a device key's best records and what
// choosing among them needs. Two readers of the same records give the same
// library.
class RecordReader {
 public:
  virtual ~RecordReader() = default;

  // Every device key the source knows, in its order.
  virtual absl::StatusOr<std::vector<std::string>> DeviceKeys() = 0;
  // The device a key's records were measured on. Errors: NOT_FOUND "no
  // device with key '<key>'" for a key never seen; the source's own.
  virtual absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) = 0;
  // The best successful record per (workload, template) of a device key,
  // ordered by op, shape, dtype and template (store::Store::QueryRecords
  // with best_only).
  virtual absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) = 0;
  // The fastest time of the naive reference kernel, in ns, over the jobs of
  // a device key, workload (canonical string) and template; nullopt when
  // none measured it (store::Store::ReferenceTime).
  virtual absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) = 0;
  // The OpenCL source of a template version. Errors: NOT_FOUND.
  virtual absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                                     int version) = 0;
  // The driver revisions of a device key (docs/DRIVER_DRIFT.md), oldest
  // first; only `revision` and `driver_version` are read. Empty (the
  // default): the source does not tell drivers apart, and the key is
  // emitted as one revision of GetDevice()'s driver with BestRecords().
  virtual absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>>
  DriverRevisions(const std::string& key) {
    return std::vector<tunefleet::v1::DriverRevision>();
  }
  // BestRecords() of the trials of `key` measured on `driver` only (those
  // of its re-validation jobs included); `first_revision`: `driver` is the
  // key's first, which trials stored without a driver version were
  // measured on (store::Store::BestRecordsOnDriver). Called only for keys
  // with two revisions or more. Default: UNIMPLEMENTED.
  virtual absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
  BestRecordsOnDriver(const std::string& key, const std::string& driver,
                      bool first_revision);
};

// Implementations are thread-safe: the HTTP server calls them from its
// worker threads.
class DataSource : public RecordReader {
 public:
  DataSource();
  ~DataSource() override;

  // The device keys and the agents (the fleet page, `tunefleet devices`).
  // Errors: the source's.
  virtual absl::StatusOr<FleetView> Fleet() = 0;
  // Fleet()'s devices alone, where the agents cost a read of their own (a
  // database file counts each agent's trials); the default reads Fleet().
  // Errors: the source's.
  virtual absl::StatusOr<std::vector<DeviceView>> Devices();
  // The newest `limit` jobs and model jobs (0: all), newest first, without
  // model jobs' per-task progress.
  virtual absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t limit) = 0;
  // One job or model job, a model job with its tasks and latency history.
  // Errors: NOT_FOUND for an unknown id.
  virtual absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t job_id) = 0;
  // The measured trials of a job (of every task of a model job) with a
  // trial id above `after_trial_id`, in trial id order, at most `limit`.
  virtual absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t job_id, int64_t after_trial_id, int64_t limit) = 0;
  // False where jobs cannot be cancelled (a database file).
  virtual bool CanCancel() const = 0;
  // Cancels a job or model job; returns its progress after. Errors:
  // NOT_FOUND, FAILED_PRECONDITION (ended already, or !CanCancel()).
  virtual absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id) = 0;
  // Calls `update` with job `job_id`'s progress (a model job's with its
  // tasks) each time it changes, until the job ends; returns its last
  // progress (`tunefleet watch`). The default is PollJob() every
  // kWatchPoll: a database file that a server writes to. A job that stays
  // unfinished in the file (its server stopped) is read until the caller
  // is stopped (Ctrl-C). Errors: Job()'s (NOT_FOUND for an unknown id);
  // the source's.
  virtual absl::StatusOr<tunefleet::v1::JobProgress> Watch(
      int64_t job_id, const ProgressUpdate& update);
  // Reads Job() every `every` until the job ends and calls `update` with
  // the first read and each read that differs from the one before;
  // returns the last. Errors: Job()'s.
  absl::StatusOr<tunefleet::v1::JobProgress> PollJob(
      int64_t job_id, const ProgressUpdate& update, absl::Duration every);
  // Calls `page` on each non-empty page of the records `query` asks for,
  // in order, as each arrives: no more than one page is held (`tunefleet
  // query`). Errors: the source's (INVALID_ARGUMENT for a bad filter);
  // UNIMPLEMENTED where the source serves no records (the default).
  virtual absl::Status Records(const RecordQuery& query,
                               const RecordPage& page) {
    (void)query;
    (void)page;
    return absl::UnimplementedError("this data source serves no records");
  }

  // RecordReader, from the reads above, each read once per source and kept:
  // a snapshot, for a command's short life (`emit`, `run`). A source that
  // answers some itself overrides those (a database: the records,
  // reference times and template sources). Errors: those of the reads. They
  // hold a lock while they read, so Devices(), Jobs() and Records() must not
  // call them (a deadlock); concurrent callers wait for each other's reads.
  //
  // The keys of Devices(), in its order.
  absl::StatusOr<std::vector<std::string>> DeviceKeys() override;
  // The DeviceInfo of Devices()' device `key`. Errors: NOT_FOUND "no device
  // with key '<key>'".
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(
      const std::string& key) override;
  // Every page of Records() for `key` with best_only.
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecords(
      const std::string& key) override;
  // The smallest reference_time_ns above 0 of Jobs(0)'s jobs of the task,
  // as store::Store::ReferenceTime computes it.
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& key, const std::string& workload,
      const std::string& template_name) override;
  // This build's template source (a server sends none). Errors: NOT_FOUND
  // "template <name> v<version> is not in this build".
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version) override;
  // The driver revisions of Devices()' device `key`; empty for an unknown
  // key.
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> DriverRevisions(
      const std::string& key) override;
  // As store::Store::BestRecordsOnDriver, from every measured record of
  // the key (Records() without best_only): per task of BestRecords(), in
  // its order, the fastest OK record measured on `driver` (ties: the lower
  // trial id).
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecordsOnDriver(
      const std::string& key, const std::string& driver,
      bool first_revision) override;

 private:
  struct Snapshot;  // what the RecordReader defaults have read

  // The snapshot's Devices(), read first if need be. Errors: Devices()'.
  absl::StatusOr<const std::vector<DeviceView>*> SnapshotDevices()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);
  // The snapshot's device of `key`. Errors: NOT_FOUND "no device with key
  // '<key>'"; Devices()'.
  absl::StatusOr<const DeviceView*> SnapshotDevice(const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);
  // The snapshot's records of `key` (its best ones, or every measured
  // one), read with Records() first if need be. Errors: Records()'.
  absl::StatusOr<const std::vector<tunefleet::v1::TuningRecord>*>
  SnapshotRecords(const std::string& key, bool best_only)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);

  absl::Mutex snapshot_mu_;
  std::unique_ptr<Snapshot> snapshot_ ABSL_PT_GUARDED_BY(snapshot_mu_);
};

}  // namespace tunefleet::data_source

#endif  // TUNEFLEET_DATA_SOURCE_DATA_SOURCE_H_
