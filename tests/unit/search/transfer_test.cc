// Transfer learning that never hurts: the history prior's weight follows
// its rank correlation with the job's own results, and a misleading
// history costs a search no more trials than none.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "gtest/gtest.h"
#include "search/history_prior.h"
#include "search/simulate.h"
#include "search_space/table.h"

namespace tunefleet::search {
namespace {

TEST(SpearmanCorrelation, KnownValues) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks (0,1,2,3) against (1,0,3,2): 1 - 6 * 4 / (4 * 15) = 0.6.
  EXPECT_NEAR(SpearmanCorrelation({1, 2, 3, 4}, {2, 1, 4, 3}), 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 1, 1}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2}, {1, 2}), 0.0);
}

TEST(PercentileRanks, TiesShareTheirMeanRank) {
  const std::vector<float> p = PercentileRanks({5, 1, 5, 3, 9});
  ASSERT_EQ(p.size(), 5u);
  EXPECT_FLOAT_EQ(p[1], 0.0f);    // lowest
  EXPECT_FLOAT_EQ(p[3], 0.25f);   // second
  EXPECT_FLOAT_EQ(p[0], 0.625f);  // ranks 2 and 3 of 0..4, shared
  EXPECT_FLOAT_EQ(p[2], 0.625f);
  EXPECT_FLOAT_EQ(p[4], 1.0f);
  EXPECT_FLOAT_EQ(PercentileRanks({7})[0], 0.5f);
}

// One history group over x in 0..63: label rises with x (or falls, when
// `inverted`).
HistoryGroup Line(bool inverted) {
  HistoryGroup g;
  for (int x = 0; x < 64; ++x) {
    g.features.AddRow(std::vector<float>{static_cast<float>(x)});
    g.labels.push_back(inverted ? 1.0f - x / 64.0f : (x + 1) / 64.0f);
  }
  return g;
}

TEST(HistoryPrior, WeightFollowsTheCorrelationAndDecays) {
  const cost_model::XgbOptions options{.rounds = 20, .max_depth = 3};
  HistoryPrior prior({Line(false)}, options, 4096);
  ASSERT_TRUE(prior.usable());
  EXPECT_EQ(prior.rows(), 64u);
  EXPECT_DOUBLE_EQ(prior.weight(), 1.0);  // before any own result
  // Own results that agree with the history.
  cost_model::FeatureMatrix own;
  std::vector<float> agree, disagree;
  for (int x = 0; x < 64; x += 8) {
    own.AddRow(std::vector<float>{static_cast<float>(x)});
    agree.push_back(static_cast<float>(x));
    disagree.push_back(static_cast<float>(-x));
  }
  const double early = prior.UpdateWeight(own, agree);
  EXPECT_GT(prior.rho(), 0.95);
  EXPECT_NEAR(
      early,
      prior.rho() * HistoryPrior::kHalfLife / (HistoryPrior::kHalfLife + 8),
      1e-9);
  // Own results that contradict it switch it off.
  EXPECT_DOUBLE_EQ(prior.UpdateWeight(own, disagree), 0.0);
  EXPECT_LT(prior.rho(), -0.95);
  // The same agreement over more results weighs less.
  cost_model::FeatureMatrix more;
  std::vector<float> more_agree;
  for (int x = 0; x < 64; ++x) {
    more.AddRow(std::vector<float>{static_cast<float>(x)});
    more_agree.push_back(static_cast<float>(x));
  }
  EXPECT_LT(prior.UpdateWeight(more, more_agree), early);
}

TEST(HistoryPrior, SamplesAtMostMaxRowsAndNoHistoryIsUnusable) {
  const cost_model::XgbOptions options{.rounds = 5, .max_depth = 3};
  HistoryPrior sampled({Line(false), Line(false), Line(true)}, options, 64);
  ASSERT_TRUE(sampled.usable());
  EXPECT_LT(sampled.rows(), 120u);  // ~64 of 192 kept
  EXPECT_GT(sampled.rows(), 20u);
  HistoryPrior none({}, options, 4096);
  EXPECT_FALSE(none.usable());
  EXPECT_TRUE(none.Predict(cost_model::FeatureMatrix{}).empty());
}

// A synthetic task with one optimum in a 4-knob space, as a table.
search_space::Table Bowl(int a0, int b0) {
  std::string csv = "a,b,c,d,time_ms\n";
  for (int a : {1, 2, 4, 8, 16, 32, 64})
    for (int b : {1, 2, 4, 8, 16, 32, 64})
      for (int c : {1, 2, 4, 8})
        for (int d : {0, 1, 2}) {
          const double la = std::log2(a) - a0, lb = std::log2(b) - b0,
                       lc = std::log2(c) - 1;
          const double t = 1 + la * la + 0.6 * lb * lb + 0.4 * lc * lc +
                           0.3 * (d != 1) + 0.05 * ((a * 7 + b * 3 + c) % 5);
          csv += std::to_string(a) + "," + std::to_string(b) + "," +
                 std::to_string(c) + "," + std::to_string(d) + "," +
                 std::to_string(t) + "\n";
        }
  auto t = search_space::ParseTable(csv, "bowl.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

SimulationResult SimulateXgb(const search_space::Table& task,
                             std::vector<HistoryGroup> history) {
  SimulationOptions o;
  o.trials = 300;
  o.seeds = 16;
  o.history = std::move(history);
  auto r = Simulate(task, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(Transfer, RelevantHistoryHelpsAndMisleadingHistoryDoesNotHurt) {
  const search_space::Table task = Bowl(4, 3);
  const SimulationResult cold = SimulateXgb(task, {});
  // The same optimum on an earlier device: fewer trials.
  const SimulationResult helped = SimulateXgb(task, {TableHistory(Bowl(4, 3))});
  EXPECT_LT(helped.to_95.median * 2, cold.to_95.median)
      << "warm " << helped.to_95.median << " cold " << cold.to_95.median;
  EXPECT_LT(helped.to_99.median, cold.to_99.median);
  // An earlier device whose optimum sits at the far corner: the prior is
  // switched off by this job's own results, so no more trials than cold
  // (a margin of two batches for the first batch it leads).
  const SimulationResult misled = SimulateXgb(task, {TableHistory(Bowl(0, 6))});
  std::cout << "to 95%/99% medians: cold " << cold.to_95.median << "/"
            << cold.to_99.median << ", relevant history " << helped.to_95.median
            << "/" << helped.to_99.median << ", misleading history "
            << misled.to_95.median << "/" << misled.to_99.median << "\n";
  EXPECT_LE(misled.to_95.median, cold.to_95.median + 16)
      << "misled " << misled.to_95.median << " cold " << cold.to_95.median;
  EXPECT_LE(misled.to_99.median, cold.to_99.median + 16)
      << "misled " << misled.to_99.median << " cold " << cold.to_99.median;
}

}  // namespace
}  // namespace tunefleet::search
