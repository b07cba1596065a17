// What a fleet test's database file holds of a job once its server has
// stopped (or been killed): the job's trial rows, read through store::Store.
// Needs tunefleet_store.
#ifndef TUNEFLEET_TESTS_STORED_TRIALS_H_
#define TUNEFLEET_TESTS_STORED_TRIALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/store.h"

namespace tunefleet::testing {

// The trial rows of job `job_id` in the database file `db`; empty (with a
// test failure) when the file or the rows cannot be read.
inline std::vector<store::Trial> StoredTrials(const std::string& db,
                                              int64_t job_id) {
  auto store = store::Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return {};
  auto rows = (*store)->JobTrials(job_id);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *std::move(rows) : std::vector<store::Trial>{};
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_STORED_TRIALS_H_
