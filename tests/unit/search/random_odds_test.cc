// Random search's exact trials to a target against hand-computed values and
// against a many-seed simulation of the random strategy.
#include "search/random_odds.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tunefleet::search {
namespace {

// Ten configs: times 1..10 ms, the 10 ms one failed.
search_space::Table Ten() {
  std::string csv = "a,time_ms,error\n";
  for (int a = 1; a <= 10; ++a) {
    csv += std::to_string(a) + "," + std::to_string(a) + "," +
           (a == 10 ? "RUNTIME_ERROR" : "OK") + "\n";
  }
  auto t = search_space::ParseTable(csv, "ten.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(ExactRandomTrials, HandComputedQuantiles) {
  const search_space::Table t = Ten();
  // One config (1 ms) within 95% or 99%: T is uniform on 1..10, so
  // P(T <= m) = m / 10: median 5, p90 9.
  const TrialsToTarget at_99 = ExactRandomTrials(t, 0.99);
  EXPECT_DOUBLE_EQ(at_99.median, 5);
  EXPECT_DOUBLE_EQ(at_99.p90, 9);
  // Within half of the best (<= 2 ms): K = 2; P(T > m) =
  // (8 choose m) / (10 choose m): m = 2 gives 28/45 (P(T <= 2) = 0.378),
  // m = 3 gives 7/15 (0.533); m = 6 gives 2/15 (0.867), m = 7 gives 1/15
  // (0.933).
  const TrialsToTarget at_half = ExactRandomTrials(t, 0.5);
  EXPECT_DOUBLE_EQ(at_half.median, 3);
  EXPECT_DOUBLE_EQ(at_half.p90, 7);
  EXPECT_TRUE(at_99.per_seed.empty());
}

TEST(ExactRandomTrials, MatchesManySeedsOfTheRandomStrategy) {
  std::string csv = "a,b,time_ms\n";
  for (int a = 0; a < 40; ++a) {
    for (int b = 0; b < 10; ++b) {
      csv += std::to_string(a) + "," + std::to_string(b) + "," +
             std::to_string(1 + ((a * 37 + b * 11) % 97) / 10.0) + "\n";
    }
  }
  auto t = search_space::ParseTable(csv, "grid.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  SimulationOptions o;
  o.strategy = tunefleet::v1::STRATEGY_RANDOM;
  o.trials = t->rows.size();
  o.seeds = 2000;
  auto simulated = Simulate(*t, o);
  ASSERT_TRUE(simulated.ok());
  const TrialsToTarget exact = ExactRandomTrials(*t, 0.95);
  EXPECT_NEAR(simulated->to_95.median, exact.median, 0.1 * exact.median + 1);
  EXPECT_NEAR(simulated->to_95.p90, exact.p90, 0.1 * exact.p90 + 1);
}

}  // namespace
}  // namespace tunefleet::search
