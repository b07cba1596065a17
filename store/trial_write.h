// One write to a trial row, as Store::WriteTrials() applies a batch of them
// in one transaction (the group commit of store/trial_writer.h).
#ifndef TUNEFLEET_STORE_TRIAL_WRITE_H_
#define TUNEFLEET_STORE_TRIAL_WRITE_H_

#include <cstdint>
#include <string>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::store {

// Which lease of a trial measured it, written with its result: the
// server keeps leases in memory only (a restarted server requeues every
// unfinished trial anyway), so the row learns its agent, attempt count and
// lease time when the result is stored. Zero or empty fields leave the
// row's as they are.
struct TrialLease {
  std::string agent;      // the agent's name (Hello.agent_name)
  int attempt = 0;        // leases of the trial so far, this one included
  int64_t leased_ms = 0;  // Unix ms the lease began
  // Provenance (schema v7, docs/BUNDLES.md): the measuring agent's
  // CL_DRIVER_VERSION and trial::KernelSha256 of the launch it built;
  // empty: unknown (stored NULL).
  std::string driver_version;
  std::string kernel_sha256;
};

struct TrialWrite {
  enum class Kind {
    kLease,     // Store::LeaseTrial: pending -> leased to `agent`
    kRequeue,   // Store::RequeueTrial: back to pending, attempts kept
    kComplete,  // Store::CompleteTrial: the result, once
  };
  Kind kind = Kind::kComplete;
  int64_t trial_id = 0;
  std::string agent;  // kLease
  // kComplete: who measured it; kRequeue: lease.attempt, the leases lost
  // so far (so a restarted server still gives up after kMaxAttempts).
  TrialLease lease;
  tunefleet::v1::Measurement measurement;  // kComplete
  double time_ns = 0;                      // kComplete, 0 unless OK
  double gflops = 0;                       // kComplete, 0 unless OK
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_TRIAL_WRITE_H_
