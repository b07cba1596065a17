// What a job row and a model job row share, written and read one way for
// both (the store's own .cc files; not part of its interface).
#ifndef TUNEFLEET_STORE_JOB_ROWS_H_
#define TUNEFLEET_STORE_JOB_ROWS_H_

#include <cstdint>
#include <string>

#include "base/time.h"
#include "contract/names.h"
#include "store/sqlite.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::store {

// Binds what a new job or model job row shares to ?at .. ?at+7 in this
// order: device_key, strategy, budget, seed, priority, created_ms (0 in
// `params`: now), deadline_ms (0: NULL) and `request_json`. `params` is a
// JobParams or a ModelJobParams.
template <typename Params>
void BindSharedJobColumns(Statement& s, int at, const Params& params,
                          const std::string& request_json) {
  s.Bind(at, params.device_key);
  s.Bind(at + 1, contract::StrategyName(params.strategy));
  s.Bind(at + 2, params.budget).Bind(at + 3, static_cast<int64_t>(params.seed));
  s.Bind(at + 4, int64_t{params.priority});
  s.Bind(at + 5, params.created_ms > 0 ? params.created_ms : base::NowMs());
  s.BindPositiveOrNull(at + 6, params.deadline_ms);
  s.Bind(at + 7, request_json);
}

// Reads the columns jobs and model_jobs share from `row` into `job` (a
// StoredJob or a ModelJob), from column `at` on, in this order: device_key,
// strategy, budget, seed, priority, state, message, request_json,
// created_ms, deadline_ms. A name the contract does not know reads as
// UNSPECIFIED; a NULL deadline as 0 (none).
template <typename JobRow>
void ReadSharedJobColumns(const Statement& row, int at, JobRow& job) {
  job.device_key = row.Text(at);
  job.strategy = contract::ParseStrategy(row.Text(at + 1))
                     .value_or(tunefleet::v1::STRATEGY_UNSPECIFIED);
  job.budget = row.Int(at + 2);
  job.seed = static_cast<uint64_t>(row.Int(at + 3));
  job.priority = static_cast<int>(row.Int(at + 4));
  job.state = contract::ParseJobState(row.Text(at + 5))
                  .value_or(tunefleet::v1::JOB_STATE_UNSPECIFIED);
  job.message = row.Text(at + 6);
  job.request_json = row.Text(at + 7);
  job.created_ms = row.Int(at + 8);
  job.deadline_ms = row.IntOr(at + 9, 0);
}

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_JOB_ROWS_H_
