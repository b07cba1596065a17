// What a fleet test's database file holds of a job once its server has
// stopped (or been killed): the job's trial rows, read through store::Store,
// and the finished ones kept across kills.
// Needs tunefleet_store.
#ifndef TUNEFLEET_TESTS_STORED_TRIALS_H_
#define TUNEFLEET_TESTS_STORED_TRIALS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
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

// The outcomes (error, time) of finished trials, kept from the database
// before each server kill, to check that they survive the restarts
// unchanged.
class KeptResults {
 public:
  // Keeps the error and time of every DONE row of `rows`.
  void Keep(const std::vector<store::Trial>& rows) {
    for (const store::Trial& t : rows) {
      if (t.state == tunefleet::v1::TRIAL_STATE_DONE) {
        kept_[t.id] = {t.error, t.time_ns};
      }
    }
  }
  // Expects each row of `rows` that was kept to have its kept error and
  // time; how many kept rows it found.
  size_t ExpectUnchanged(const std::vector<store::Trial>& rows) const {
    size_t unchanged = 0;
    for (const store::Trial& t : rows) {
      auto it = kept_.find(t.id);
      if (it == kept_.end()) continue;
      EXPECT_EQ(t.error, it->second.first) << "trial " << t.id;
      EXPECT_EQ(t.time_ns, it->second.second) << "trial " << t.id;
      ++unchanged;
    }
    return unchanged;
  }
  size_t size() const { return kept_.size(); }

 private:
  std::map<int64_t, std::pair<tunefleet::v1::Measurement::Error, double>> kept_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_STORED_TRIALS_H_
