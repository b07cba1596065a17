#include "metrics/server_metrics.h"

#include <sys/stat.h>

#include <utility>
#include <vector>

#include "contract/names.h"
#include "prometheus/text_serializer.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::metrics {
namespace {

using tunefleet::v1::Measurement;

// The label values every job-state family starts with (all at 0).
std::map<std::string, int64_t> ZeroByJobState() {
  std::map<std::string, int64_t> zero;
  for (int s = tunefleet::v1::JobState_MIN; s <= tunefleet::v1::JobState_MAX;
       ++s) {
    const auto state = static_cast<tunefleet::v1::JobState>(s);
    if (!tunefleet::v1::JobState_IsValid(s) ||
        state == tunefleet::v1::JOB_STATE_UNSPECIFIED) {
      continue;
    }
    zero[contract::JobStateName(state)] = 0;
  }
  return zero;
}

// `values` over `base`: a state missing from a snapshot reads 0, not stale.
std::map<std::string, int64_t> Over(
    std::map<std::string, int64_t> base,
    const std::map<std::string, int64_t>& values) {
  for (const auto& [k, v] : values) base[k] = v;
  return base;
}

// A metric family: `builder` (prometheus::BuildCounter() and the like)
// with `name` and `help`, registered in `registry`.
template <typename Builder>
auto& Registered(Builder builder, const std::string& name,
                 const std::string& help, prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

ServerMetrics::ServerMetrics(std::function<Snapshot()> snapshot)
    : snapshot_(std::move(snapshot)),
      registry_(std::make_shared<prometheus::Registry>()),
      trials_done_(Registered(prometheus::BuildCounter(),
                              "tunefleet_trials_done_total",
                              "Trials done in the database, by "
                              "Measurement.Error code (rate() gives trials "
                              "done per second).",
                              *registry_)),
      requeues_(Registered(prometheus::BuildCounter(),
                           "tunefleet_requeues_total",
                           "Leases lost (agent gone, silent or past its "
                           "deadline) whose trial went back to the queue.",
                           *registry_)),
      abandoned_(Registered(prometheus::BuildCounter(),
                            "tunefleet_trials_abandoned_total",
                            "Trials given up as DEVICE_LOST after losing "
                            "their lease the maximum number of times.",
                            *registry_)),
      rpc_duration_(Registered(prometheus::BuildHistogram(),
                               "tunefleet_rpc_duration_seconds",
                               "gRPC calls by full method and status code: "
                               "time from the call's arrival to its status, "
                               "seconds (a stream: its whole life).",
                               *registry_)),
      queued_trials_(Registered(prometheus::BuildGauge(),
                                "tunefleet_queue_depth",
                                "Trials waiting for an agent.", *registry_)
                         .Add({})),
      leases_in_flight_(Registered(prometheus::BuildGauge(),
                                   "tunefleet_leases_in_flight",
                                   "Trials held by agents now.", *registry_)
                            .Add({})),
      agents_(Registered(prometheus::BuildGauge(), "tunefleet_agents_connected",
                         "Connected agents by device key.", *registry_)),
      jobs_(Registered(prometheus::BuildGauge(), "tunefleet_jobs",
                       "Jobs (not the tasks of model jobs) by state.",
                       *registry_)),
      model_jobs_(Registered(prometheus::BuildGauge(), "tunefleet_model_jobs",
                             "Model jobs by state.", *registry_)),
      sqlite_bytes_(Registered(prometheus::BuildGauge(),
                               "tunefleet_sqlite_bytes",
                               "The SQLite database's size on disk (the file "
                               "and its -wal), bytes.",
                               *registry_)
                        .Add({})) {
  absl::MutexLock lock(&mu_);
  for (int e = Measurement::Error_MIN; e <= Measurement::Error_MAX; ++e) {
    if (!Measurement::Error_IsValid(e) || e == Measurement::ERROR_UNSPECIFIED) {
      continue;
    }
    const std::string name =
        Measurement::Error_Name(static_cast<Measurement::Error>(e));
    trials_done_by_error_[name] = &trials_done_.Add({{"error", name}});
  }
  requeues_.Add({});
  abandoned_.Add({});
  SetByLabel(jobs_, "state", ZeroByJobState(), jobs_by_state_);
  SetByLabel(model_jobs_, "state", ZeroByJobState(), model_jobs_by_state_);
}

prometheus::Histogram::BucketBoundaries ServerMetrics::RpcBuckets() {
  // 1 ms to 5 min: unary calls take milliseconds, an agent's or watcher's
  // stream lives minutes.
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60,  300};
}

void ServerMetrics::LeasesLost(int64_t requeued, int64_t abandoned) {
  if (requeued > 0) requeues_.Add({}).Increment(static_cast<double>(requeued));
  if (abandoned > 0) {
    abandoned_.Add({}).Increment(static_cast<double>(abandoned));
  }
}

void ServerMetrics::ObserveRpc(absl::string_view method, absl::string_view code,
                               double seconds) {
  absl::MutexLock lock(&mu_);
  auto key = std::make_pair(std::string(method), std::string(code));
  auto it = rpc_by_method_code_.find(key);
  if (it == rpc_by_method_code_.end()) {
    prometheus::Histogram* h = &rpc_duration_.Add(
        {{"method", key.first}, {"code", key.second}}, RpcBuckets());
    it = rpc_by_method_code_.emplace(std::move(key), h).first;
  }
  it->second->Observe(seconds);
}

void ServerMetrics::SetByLabel(
    prometheus::Family<prometheus::Gauge>& family, const std::string& label,
    const std::map<std::string, int64_t>& values,
    std::map<std::string, prometheus::Gauge*>& seen) {
  for (auto it = seen.begin(); it != seen.end();) {
    if (values.count(it->first) == 0) {
      family.Remove(it->second);
      it = seen.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [value, n] : values) {
    prometheus::Gauge*& gauge = seen[value];
    if (gauge == nullptr) gauge = &family.Add({{label, value}});
    gauge->Set(static_cast<double>(n));
  }
}

std::string ServerMetrics::Text() {
  absl::MutexLock text_lock(&text_mu_);
  const Snapshot snapshot = snapshot_ ? snapshot_() : Snapshot{};
  {
    absl::MutexLock lock(&mu_);
    queued_trials_.Set(static_cast<double>(snapshot.queued_trials));
    leases_in_flight_.Set(static_cast<double>(snapshot.leases_in_flight));
    sqlite_bytes_.Set(static_cast<double>(snapshot.sqlite_bytes));
    SetByLabel(agents_, "device_key", snapshot.agents_by_key, agents_by_key_);
    for (const auto& [error, total] : snapshot.trials_done_by_error) {
      prometheus::Counter*& counter = trials_done_by_error_[error];
      if (counter == nullptr) counter = &trials_done_.Add({{"error", error}});
      const double up = static_cast<double>(total) - counter->Value();
      if (up > 0) counter->Increment(up);
    }
    SetByLabel(jobs_, "state", Over(ZeroByJobState(), snapshot.jobs_by_state),
               jobs_by_state_);
    SetByLabel(model_jobs_, "state",
               Over(ZeroByJobState(), snapshot.model_jobs_by_state),
               model_jobs_by_state_);
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

int64_t SqliteBytes(const std::string& path) {
  return FileBytes(path) + FileBytes(path + "-wal");
}

}  // namespace tunefleet::metrics
