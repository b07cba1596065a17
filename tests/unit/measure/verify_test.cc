#include "measure/verify.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::measure {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(MaxRelativeError, IsRelativeToTheLargestFiniteReference) {
  EXPECT_DOUBLE_EQ(MaxRelativeError(std::vector<float>{1, 2.5f, -4},
                                    std::vector<float>{1, 2, -4}),
                   0.125);
  EXPECT_EQ(
      MaxRelativeError(std::vector<float>{1, 2}, std::vector<float>{1, 2}), 0);
  EXPECT_TRUE(std::isinf(
      MaxRelativeError(std::vector<float>{1}, std::vector<float>{1, 2})));
}

TEST(MaxRelativeError, NansMustMatch) {
  // An output written in part: the NaNs both runs start with stay where
  // neither kernel writes.
  EXPECT_EQ(MaxRelativeError(std::vector<float>{kNan, 3, kNan},
                             std::vector<float>{kNan, 3, kNan}),
            0);
  // The candidate wrote where the reference did not (past its box) ...
  EXPECT_TRUE(std::isinf(MaxRelativeError(std::vector<float>{0, 3, kNan},
                                          std::vector<float>{kNan, 3, kNan})));
  // ... or left an element the reference wrote.
  EXPECT_TRUE(std::isinf(
      MaxRelativeError(std::vector<float>{kNan, 3}, std::vector<float>{2, 3})));
}

TEST(MaxRelativeError, InfinitiesMustMatch) {
  EXPECT_EQ(MaxRelativeError(std::vector<float>{kInf, -kInf, 1},
                             std::vector<float>{kInf, -kInf, 1}),
            0);
  EXPECT_TRUE(std::isinf(MaxRelativeError(std::vector<float>{-kInf, 1},
                                          std::vector<float>{kInf, 1})));
  EXPECT_TRUE(std::isinf(
      MaxRelativeError(std::vector<float>{5, 1}, std::vector<float>{kInf, 1})));
  EXPECT_TRUE(std::isinf(
      MaxRelativeError(std::vector<float>{kInf, 1}, std::vector<float>{5, 1})));
}

}  // namespace
}  // namespace tunefleet::measure
