// Unit tests of tunefleet_cost_model: the feature helpers and the XGBoost
// ranking model.
#include "cost_model/xgb_ranker.h"

#include <vector>

#include "cost_model/features.h"
#include "gtest/gtest.h"

namespace tunefleet::cost_model {
namespace {

TEST(XgbRanker, LearnsAnOrdering) {
  // y = -(x0 - 3)^2 - x1: the model must rank the held-out rows correctly.
  FeatureMatrix train, test;
  std::vector<float> labels;
  for (int x0 = 0; x0 < 8; ++x0) {
    for (int x1 = 0; x1 < 4; ++x1) {
      const std::vector<float> row = {static_cast<float>(x0),
                                      static_cast<float>(x1)};
      train.AddRow(row);
      labels.push_back(-static_cast<float>((x0 - 3) * (x0 - 3) + x1));
    }
  }
  XgbRanker model({.rounds = 30, .max_depth = 3});
  EXPECT_FALSE(model.Predict(train).ok());  // not trained yet
  ASSERT_TRUE(model.Fit(train, labels).ok());
  test.AddRow(std::vector<float>{3, 0});  // best
  test.AddRow(std::vector<float>{7, 3});  // worst
  test.AddRow(std::vector<float>{5, 1});
  auto scores = model.Predict(test);
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_GT((*scores)[0], (*scores)[2]);
  EXPECT_GT((*scores)[2], (*scores)[1]);
  FeatureMatrix wrong;
  wrong.AddRow(std::vector<float>{1, 2, 3});
  EXPECT_EQ(model.Predict(wrong).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model.Fit(train, {1.0f}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KnobFeatures, SizesOnALogScaleFlagsAsTheyAreThenAlignments) {
  const std::vector<int64_t> values = {64, 1, 0, 3, 48};
  const std::vector<float> f =
      KnobFeatures(values, {true, true, true, false, true});
  ASSERT_EQ(f.size(), 9u);
  EXPECT_FLOAT_EQ(f[0], 6);        // log2(64)
  EXPECT_FLOAT_EQ(f[1], 0);        // log2(1)
  EXPECT_FLOAT_EQ(f[2], -1);       // a non-positive size
  EXPECT_FLOAT_EQ(f[3], 3);        // a flag keeps its value
  EXPECT_NEAR(f[4], 5.585, 1e-3);  // log2(48)
  // Alignments of the size-like knobs, in order: 64 = 2^6, 1 = 2^0, none
  // for 0, 48 = 3 * 2^4.
  EXPECT_FLOAT_EQ(f[5], 6);
  EXPECT_FLOAT_EQ(f[6], 0);
  EXPECT_FLOAT_EQ(f[7], -1);
  EXPECT_FLOAT_EQ(f[8], 4);
}

TEST(FeatureMatrix, RowsAreContiguous) {
  FeatureMatrix m;
  m.AddRow(std::vector<float>{1, 2});
  m.AddRow(std::vector<float>{3, 4});
  EXPECT_EQ(m.rows, 2u);
  EXPECT_EQ(m.cols, 2u);
  EXPECT_FLOAT_EQ(m.Row(1)[0], 3);
  EXPECT_FLOAT_EQ(m.Row(1)[1], 4);
}

}  // namespace
}  // namespace tunefleet::cost_model
