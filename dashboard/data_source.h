// What the web dashboard shows, behind one interface: the daemon answers
// from its store and its live agents and jobs (server/http_frontend.h),
// `tunefleet dashboard --db FILE`, `tunefleet report`, `tunefleet jobs
// --db` and `tunefleet watch --db` from a database file alone
// (dashboard/store_source.h), `tunefleet jobs --server`, `watch` and
// `cancel` from a server's TuningService (cli/server_source.h). The pages and
// the JSON API (dashboard/http_server.h) only call this.
#ifndef TUNEFLEET_DASHBOARD_DATA_SOURCE_H_
#define TUNEFLEET_DASHBOARD_DATA_SOURCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::dashboard {

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
  // Records per page, 1 .. 10,000; 0: the source's default (1,000).
  uint32_t page_size = 0;
};

// A job's progress as a watch reads it (DataSource::Watch).
using ProgressUpdate = std::function<void(const tunefleet::v1::JobProgress&)>;

// One page of tuning records, in the order the source reads them.
using RecordPage =
    std::function<void(const std::vector<tunefleet::v1::TuningRecord>&)>;

// How often DataSource::Watch's default reads a job again.
inline constexpr absl::Duration kWatchPoll = absl::Seconds(1);

// Implementations are thread-safe: the HTTP server calls them from its
// worker threads.
class DataSource {
 public:
  virtual ~DataSource() = default;

  virtual absl::StatusOr<FleetView> Fleet() = 0;
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
};

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_DATA_SOURCE_H_
