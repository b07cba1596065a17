// The small GEMM job that store, emitter, bundle, CLI and server tests put
// into a tuning-record database (TempStore, temp_store.h) or submit to a
// server, the device it runs on, and a one-time measurement.
#ifndef TUNEFLEET_TESTS_SUPPORT_SMALL_JOB_H_
#define TUNEFLEET_TESTS_SUPPORT_SMALL_JOB_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "store/store.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::testing {

// A job of the gemm template on GEMM M=8,N=8,K=8 for `device_key`: random
// search, `budget` trials, seed `seed`, priority 0; a job of its own (no
// model job).
inline store::JobParams SmallGemmJob(
    int64_t budget = 10, uint64_t seed = 1,
    const std::string& device_key = "test-gpu") {
  return store::JobParams{{*templates::Workload::Parse("gemm", "M=8,N=8,K=8"),
                           *templates::FindTemplate("gemm", "")},
                          device_key,
                          tunefleet::v1::STRATEGY_RANDOM,
                          budget,
                          seed,
                          0};
}

// A GEMM job as a client submits it: workload gemm `shape` for
// `device_key`, random search, `trials` trials, seed `seed`, without the
// reference and without transfer learning.
inline tunefleet::v1::SubmitJobRequest GemmJobRequest(
    const std::string& device_key, uint32_t trials, uint64_t seed,
    const std::string& shape = "M=64,N=64,K=64") {
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_workload() =
      trial::WorkloadToProto(*templates::Workload::Parse("gemm", shape));
  r.set_device_key(device_key);
  r.set_trials(trials);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_seed(seed);
  r.set_skip_reference(true);
  r.set_no_transfer(true);
  return r;
}

// Adds the device `key` named "Test GPU" to `store` (vendor `vendor` when
// not empty); UpsertDevice's status.
inline absl::Status AddTestGpu(store::Store* store,
                               const std::string& key = "test-gpu",
                               const std::string& vendor = "") {
  tunefleet::v1::DeviceInfo info;
  info.set_device_name("Test GPU");
  if (!vendor.empty()) info.set_vendor(vendor);
  return store->UpsertDevice(key, info);
}

// A measurement that succeeded with one time of `ns` (ns).
inline tunefleet::v1::Measurement OneTimeOk(double ns) {
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::OK);
  m.add_times_ns(ns);
  return m;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_SMALL_JOB_H_
