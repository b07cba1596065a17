#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "contract/names.h"
#include "cost_model/xgb_ranker.h"
#include "gtest/gtest.h"
#include "search/random_search.h"
#include "search/strategy.h"
#include "search_space/space.h"

namespace tunefleet::search {
namespace {

// 4 x 4 x 4 knobs, valid when a * b <= 32.
search_space::SearchSpace SmallSpace() {
  return search_space::SearchSpace(
      {{"a", {1, 2, 4, 8}, true},
       {"b", {1, 2, 4, 8}, true},
       {"c", {0, 1, 2, 3}, false}},
      [](const std::vector<int64_t>& v) { return v[0] * v[1] <= 32; });
}

TEST(SearchSpace, IndexRoundTripsAndCountsValidConfigs) {
  search_space::SearchSpace space = SmallSpace();
  EXPECT_EQ(space.raw_size(), 64u);
  EXPECT_TRUE(space.enumerable());
  // (a, b) pairs with a*b > 32: (8, 8) only -> 4 configs of c invalid.
  EXPECT_EQ(space.valid_size(), 60u);
  for (uint64_t i = 0; i < space.raw_size(); ++i) {
    EXPECT_EQ(space.IndexOf(space.Digits(i)), i);
  }
  EXPECT_EQ(space.Config(space.IndexOf({2, 3, 1})),
            (std::vector<int64_t>{4, 8, 1}));
  EXPECT_EQ(space.ConfigString(space.IndexOf({2, 3, 1})), "a=4,b=8,c=1");
  EXPECT_FALSE(space.IsValid(space.IndexOf({3, 3, 0})));
}

TEST(SearchSpace, NeighboursStepOneKnobAndStayValid) {
  search_space::SearchSpace space = SmallSpace();
  const uint64_t center = space.IndexOf({2, 3, 1});  // a=4 b=8 c=1
  std::vector<uint64_t> n = space.Neighbours(center);
  std::set<std::vector<int64_t>> got;
  for (uint64_t i : n) got.insert(space.Config(i));
  // a=8,b=8 is invalid; b has no step up.
  EXPECT_EQ(got, (std::set<std::vector<int64_t>>{
                     {2, 8, 1}, {4, 4, 1}, {4, 8, 0}, {4, 8, 2}}));
}

TEST(SearchSpace, HugeSpacesAreSampledNotEnumerated) {
  std::vector<search_space::KnobSpec> knobs;
  knobs.reserve(12);
  for (int k = 0; k < 12; ++k) {
    knobs.push_back({"k" + std::to_string(k), {1, 2, 3, 4, 5, 6, 7, 8}, true});
  }
  search_space::SearchSpace space(
      knobs, [](const std::vector<int64_t>& v) { return v[0] <= 4; });
  EXPECT_FALSE(space.enumerable());
  EXPECT_TRUE(space.valid_indices().empty());
  // About half of 8^12 configs are valid.
  const double expected = std::pow(8.0, 12) / 2;
  EXPECT_NEAR(static_cast<double>(space.valid_size()) / expected, 1.0, 0.1);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(space.IsValid(space.RandomValid(rng)));
  }
}

TEST(RandomSearch, SamplesEveryValidConfigOnceThenStops) {
  search_space::SearchSpace space = SmallSpace();
  RandomSearch random(space, 42);
  std::set<uint64_t> seen;
  for (int round = 0; round < 20; ++round) {
    for (uint64_t i : random.Propose(7)) {
      EXPECT_TRUE(space.IsValid(i));
      EXPECT_TRUE(seen.insert(i).second) << "proposed twice: " << i;
    }
  }
  EXPECT_EQ(seen.size(), 60u);
  EXPECT_TRUE(random.Propose(5).empty());
}

TEST(GridSearch, EnumeratesEveryValidConfigInOrder) {
  search_space::SearchSpace space = SmallSpace();
  auto grid = MakeStrategy(tunefleet::v1::STRATEGY_GRID, space, {});
  std::vector<uint64_t> all;
  for (int round = 0; round < 10; ++round) {
    std::vector<uint64_t> batch = grid->Propose(8);
    all.insert(all.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(all, space.valid_indices());
}

// A guided strategy proposes suggestions first, then the inner strategy's
// picks, never a config twice (suggested, skipped from a stopped run, or
// the inner's), and still reaches every valid config once.
TEST(GuidedStrategy, SuggestionsFirstNoConfigTwice) {
  search_space::SearchSpace space = SmallSpace();
  const uint64_t resumed = space.valid_indices()[0];
  GuidedStrategy guided(std::make_unique<RandomSearch>(space, 42), {resumed});
  const uint64_t a = space.valid_indices()[5], b = space.valid_indices()[9];
  EXPECT_TRUE(guided.Suggest(a));
  EXPECT_TRUE(guided.Suggest(b));
  EXPECT_FALSE(guided.Suggest(a));        // queued already
  EXPECT_FALSE(guided.Suggest(resumed));  // the stopped run measured it
  std::vector<uint64_t> first = guided.Propose(3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0], a);
  EXPECT_EQ(first[1], b);
  EXPECT_FALSE(guided.Suggest(b));  // proposed already
  std::set<uint64_t> seen(first.begin(), first.end());
  for (int round = 0; round < 20; ++round) {
    for (uint64_t i : guided.Propose(7)) {
      EXPECT_TRUE(seen.insert(i).second) << "proposed twice: " << i;
    }
  }
  EXPECT_EQ(seen.count(resumed), 0u);
  EXPECT_EQ(seen.size(), 59u);  // every valid config but the resumed one
}

TEST(Strategies, SameSeedSameProposals) {
  search_space::SearchSpace space = SmallSpace();
  for (tunefleet::v1::Strategy strategy : AllStrategies()) {
    auto a = MakeStrategy(strategy, space, StrategyOptions{.seed = 9});
    auto b = MakeStrategy(strategy, space, StrategyOptions{.seed = 9});
    EXPECT_EQ(a->Propose(10), b->Propose(10))
        << contract::StrategyName(strategy);
    EXPECT_EQ(*contract::ParseStrategy(contract::StrategyName(strategy)),
              strategy);
  }
  auto unknown = contract::ParseStrategy("anneal");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("grid, random, sa, ga, xgb"),
            absl::string_view::npos);
}

// Trials a strategy needs to measure the space's best config (a synthetic
// cost with one optimum), in batches of `batch`.
int TrialsToOptimum(tunefleet::v1::Strategy strategy,
                    const search_space::SearchSpace& space,
                    const std::function<double(uint64_t)>& cost, uint64_t seed,
                    int batch) {
  auto s = MakeStrategy(strategy, space, StrategyOptions{.seed = seed});
  const uint64_t best = *std::min_element(
      space.valid_indices().begin(), space.valid_indices().end(),
      [&](uint64_t a, uint64_t b) { return cost(a) < cost(b); });
  int trials = 0;
  while (true) {
    std::vector<uint64_t> proposed = s->Propose(batch);
    if (proposed.empty()) return trials;
    std::vector<Observation> results;
    for (uint64_t i : proposed) {
      ++trials;
      if (i == best) return trials;
      results.push_back({i, true, cost(i)});
    }
    s->Observe(results);
  }
}

TEST(XgbSearch, BeatsRandomSearchOnASmoothSpace) {
  std::vector<search_space::KnobSpec> knobs = {
      {"a", {1, 2, 4, 8, 16, 32, 64, 128}, true},
      {"b", {1, 2, 4, 8, 16, 32, 64, 128}, true},
      {"c", {1, 2, 4, 8, 16}, true},
      {"d", {0, 1}, false}};
  search_space::SearchSpace space(knobs, nullptr);
  // A bowl in log space with its minimum at a=16, b=8, c=4, d=1.
  auto cost = [&](uint64_t i) {
    std::vector<int64_t> v = space.Config(i);
    const double a = std::log2(v[0]) - 4, b = std::log2(v[1]) - 3,
                 c = std::log2(v[2]) - 2;
    return 1.0 + a * a + 0.5 * b * b + 0.3 * c * c + (v[3] ? 0 : 0.7);
  };
  std::vector<int> xgb, random;
  for (uint64_t seed = 1; seed <= 7; ++seed) {
    xgb.push_back(
        TrialsToOptimum(tunefleet::v1::STRATEGY_XGB, space, cost, seed, 8));
    random.push_back(
        TrialsToOptimum(tunefleet::v1::STRATEGY_RANDOM, space, cost, seed, 8));
  }
  std::sort(xgb.begin(), xgb.end());
  std::sort(random.begin(), random.end());
  // Medians over 7 seeds; the space has 640 configs.
  EXPECT_LT(xgb[3] * 2, random[3])
      << "xgb " << xgb[3] << " random " << random[3];
}

TEST(XgbSearch, WalksSpacesTooBigToListTowardsTheOptimum) {
  // 8^12 raw configs: candidates come from annealing walks over the model
  // and from the best config's neighbours.
  std::vector<search_space::KnobSpec> knobs;
  for (int k = 0; k < 12; ++k) {
    knobs.push_back({"k" + std::to_string(k), {1, 2, 3, 4, 5, 6, 7, 8}, true});
  }
  search_space::SearchSpace space(
      knobs, [](const std::vector<int64_t>& v) { return v[0] <= 4; });
  ASSERT_FALSE(space.enumerable());
  // Cost: distance of the first three knobs from 3.
  auto cost = [&](uint64_t i) {
    const std::vector<int64_t> v = space.Config(i);
    return 1.0 + std::abs(v[0] - 3) + std::abs(v[1] - 3) + std::abs(v[2] - 3);
  };
  auto s = MakeStrategy(tunefleet::v1::STRATEGY_XGB, space,
                        StrategyOptions{.seed = 2});
  std::set<uint64_t> seen;
  double best = 1e9;
  for (int round = 0; round < 20; ++round) {
    std::vector<Observation> results;
    for (uint64_t i : s->Propose(8)) {
      EXPECT_TRUE(space.IsValid(i));
      EXPECT_TRUE(seen.insert(i).second) << "proposed twice";
      best = std::min(best, cost(i));
      results.push_back({i, true, cost(i)});
    }
    s->Observe(results);
  }
  EXPECT_EQ(seen.size(), 160u);
  // The optimum (3, 3, 3 in the first knobs) is 1 in 256 configs: random
  // picks find it within 160 trials with probability 1 - (255/256)^160,
  // 47%.
  EXPECT_EQ(best, 1.0);
}

TEST(XgbSearch, TreatsFailuresAsWorst) {
  search_space::SearchSpace space = SmallSpace();
  auto s = MakeStrategy(tunefleet::v1::STRATEGY_XGB, space,
                        StrategyOptions{.seed = 1, .epsilon = 0});
  // Configs with c == 3 fail; every other costs the same except a=2,b=2.
  for (int round = 0; round < 4; ++round) {
    std::vector<Observation> results;
    for (uint64_t i : s->Propose(8)) {
      std::vector<int64_t> v = space.Config(i);
      results.push_back({i, v[2] != 3, v[0] == 2 && v[1] == 2 ? 1.0 : 2.0});
    }
    s->Observe(results);
  }
  // With the model trained, proposals avoid the failing knob value.
  int failing = 0;
  std::vector<uint64_t> next = s->Propose(8);
  for (uint64_t i : next) failing += space.Config(i)[2] == 3;
  EXPECT_LE(failing, 1) << "of " << next.size();
}

}  // namespace
}  // namespace tunefleet::search
