// The bootstrap ensemble: every member learns the ordering the data pins
// down, and the members disagree where the data says little.
#include "cost_model/rank_ensemble.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::cost_model {
namespace {

// y = -(x0 - 3)^2 - x1 on x0 in 0..7, x1 in 0..3.
void Bowl(FeatureMatrix* x, std::vector<float>* labels) {
  for (int x0 = 0; x0 < 8; ++x0) {
    for (int x1 = 0; x1 < 4; ++x1) {
      x->AddRow(
          std::vector<float>{static_cast<float>(x0), static_cast<float>(x1)});
      labels->push_back(-static_cast<float>((x0 - 3) * (x0 - 3) + x1));
    }
  }
}

TEST(RankEnsemble, EveryMemberRanksTheBowlAndMembersDiffer) {
  FeatureMatrix x;
  std::vector<float> labels;
  Bowl(&x, &labels);
  RankEnsemble ensemble({.rounds = 30, .max_depth = 3, .seed = 5}, 6);
  EXPECT_FALSE(ensemble.trained());
  EXPECT_EQ(ensemble.PredictAll(x).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(ensemble.Fit(x, labels).ok());
  EXPECT_TRUE(ensemble.trained());
  EXPECT_EQ(ensemble.members(), 6);
  FeatureMatrix test;
  test.AddRow(std::vector<float>{3, 0});  // best
  test.AddRow(std::vector<float>{7, 3});  // worst
  auto scores = ensemble.PredictAll(test);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), 6u);
  for (const std::vector<float>& member : *scores) {
    ASSERT_EQ(member.size(), 2u);
    EXPECT_GT(member[0], member[1]);
  }
  auto first = ensemble.PredictAll(test, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0], (*scores)[0]);
  // Bootstrap resamples give different models: the members' scores of the
  // training rows are not all identical.
  auto all = ensemble.PredictAll(x);
  ASSERT_TRUE(all.ok());
  int differing = 0;
  for (size_t m = 1; m < all->size(); ++m) {
    for (size_t r = 0; r < x.rows; ++r) {
      differing += std::abs((*all)[m][r] - (*all)[0][r]) > 1e-6f;
    }
  }
  EXPECT_GT(differing, 0);
}

TEST(RankEnsemble, BadInputKeepsThePreviousModels) {
  FeatureMatrix x;
  std::vector<float> labels;
  Bowl(&x, &labels);
  RankEnsemble ensemble({.rounds = 10, .max_depth = 3}, 3);
  ASSERT_TRUE(ensemble.Fit(x, labels).ok());
  EXPECT_EQ(ensemble.Fit(x, {1.0f}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ensemble.Fit(FeatureMatrix{}, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ensemble.trained());
  FeatureMatrix wrong;
  wrong.AddRow(std::vector<float>{1, 2, 3});
  EXPECT_EQ(ensemble.PredictAll(wrong).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet::cost_model
