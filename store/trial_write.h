// One write to a trial row, as Store::WriteTrials() applies a batch of them
// in one transaction (the group commit of store/trial_writer.h).
#ifndef TUNEFLEET_STORE_TRIAL_WRITE_H_
#define TUNEFLEET_STORE_TRIAL_WRITE_H_

#include <cstdint>
#include <string>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::store {

struct TrialWrite {
  enum class Kind {
    kLease,     // Store::LeaseTrial: pending -> leased to `agent`
    kRequeue,   // Store::RequeueTrial: leased -> pending
    kComplete,  // Store::CompleteTrial: the result, once
  };
  Kind kind = Kind::kComplete;
  int64_t trial_id = 0;
  std::string agent;                       // kLease
  tunefleet::v1::Measurement measurement;  // kComplete
  double time_ns = 0;                      // kComplete, 0 unless OK
  double gflops = 0;                       // kComplete, 0 unless OK
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_TRIAL_WRITE_H_
