// The server's metrics in the Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), built on
// prometheus-cpp's core (a Registry of counter, gauge and histogram
// families and its TextSerializer). Served by the HTTP frontend at
// GET /metrics; docs/METRICS.md lists every family.
//
// Two kinds of values:
// - counters (cumulative; rates are Prometheus' work, e.g.
//   rate(tunefleet_trials_done_total[5m]) is trials done per second):
//   trials done by error code, read from the store (so they count every
//   trial the database holds, across restarts), and events counted as they
//   happen since the server started (LeasesLost, ObserveRpc);
// - levels (queue depth, leases, agents, jobs by state, the database's
//   size), read from a snapshot function on every Text() call, so they
//   are as fresh as the scrape and cost nothing between scrapes.
#ifndef TUNEFLEET_METRICS_SERVER_METRICS_H_
#define TUNEFLEET_METRICS_SERVER_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace tunefleet::metrics {

// The server's levels at one moment, read at scrape time.
struct Snapshot {
  // Trials waiting for an agent (queued in the scheduler, not leased).
  int64_t queued_trials = 0;
  // Trials held by agents now (leases).
  int64_t leases_in_flight = 0;
  // Connected agents by device key.
  std::map<std::string, int64_t> agents_by_key;
  // Jobs by state name ("queued", "running", "done", "failed",
  // "cancelled"; contract/names.h JobStateName), and model jobs likewise.
  std::map<std::string, int64_t> jobs_by_state;
  std::map<std::string, int64_t> model_jobs_by_state;
  // The SQLite database's size on disk, bytes: the file plus its -wal.
  int64_t sqlite_bytes = 0;
  // Trials the store holds as done, by Measurement.Error name ("OK",
  // "COMPILE_ERROR", ...): totals, which only grow. An error code missing
  // here keeps its last value.
  std::map<std::string, int64_t> trials_done_by_error;
};

// Thread-safe: the recording calls may come from any thread, concurrently
// with Text().
class ServerMetrics {
 public:
  // `snapshot` is called once per Text(), outside any lock of this class;
  // empty: the level gauges stay 0.
  explicit ServerMetrics(std::function<Snapshot()> snapshot = nullptr);
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Leases lost (agent gone, silent or past its deadline): `requeued`
  // trials went back to the queue, `abandoned` ones ended as DEVICE_LOST
  // after kMaxAttempts.
  void LeasesLost(int64_t requeued, int64_t abandoned);
  // One gRPC call ended: its full method ("/tunefleet.v1.TuningService/
  // SubmitJob"), status code name ("OK", "NOT_FOUND", ...) and duration in
  // seconds (for a stream: its whole life).
  void ObserveRpc(absl::string_view method, absl::string_view code,
                  double seconds);

  // Takes a snapshot and renders every family as Prometheus text format
  // 0.0.4 (Content-Type: text/plain; version=0.0.4). A counter fed from
  // the snapshot moves up to its total and never down.
  std::string Text();

  // Buckets of tunefleet_rpc_duration_seconds, seconds.
  static prometheus::Histogram::BucketBoundaries RpcBuckets();

 private:
  // Sets `family`'s gauges to `values` by the label `label`; label values
  // seen before and absent now are removed.
  void SetByLabel(prometheus::Family<prometheus::Gauge>& family,
                  const std::string& label,
                  const std::map<std::string, int64_t>& values,
                  std::map<std::string, prometheus::Gauge*>& seen)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<Snapshot()> snapshot_;
  // Owns every family below; Collect() is thread-safe.
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& trials_done_;
  prometheus::Family<prometheus::Counter>& requeues_;
  prometheus::Family<prometheus::Counter>& abandoned_;
  prometheus::Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Gauge& queued_trials_;
  prometheus::Gauge& leases_in_flight_;
  prometheus::Family<prometheus::Gauge>& agents_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Family<prometheus::Gauge>& model_jobs_;
  prometheus::Gauge& sqlite_bytes_;

  absl::Mutex mu_;
  // Label sets already added (Family::Add is find-or-create, but keeping
  // the pointers spares a hash of the labels per event). Every error code
  // of the contract is there from the start, at 0.
  std::map<std::string, prometheus::Counter*> trials_done_by_error_
      ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, prometheus::Histogram*>
      rpc_by_method_code_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> agents_by_key_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> jobs_by_state_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, prometheus::Gauge*> model_jobs_by_state_
      ABSL_GUARDED_BY(mu_);
  // Text() renders one snapshot at a time, so that two scrapes never
  // interleave their gauge updates.
  absl::Mutex text_mu_;
};

// The size in bytes of a SQLite database on disk: `path` plus
// `path`-wal (either may be missing: 0 for it).
int64_t SqliteBytes(const std::string& path);

}  // namespace tunefleet::metrics

#endif  // TUNEFLEET_METRICS_SERVER_METRICS_H_
