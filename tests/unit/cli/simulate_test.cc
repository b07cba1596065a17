// Simulation on recorded tables: determinism, the acceptance ratio on the
// recorded tables, and transfer learning on synthetic tables.
#include "search/simulate.h"

#include <cmath>
#include <filesystem>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/simulate_command.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "search_space/table.h"
#include "tests/support/command_runner.h"

namespace tunefleet {
namespace {

using search_space::Table;

Table Load(const std::string& name) {
  auto t = search_space::LoadTable(testing::SourceDir() +
                                   "/tests/data/tables/" + name);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(Simulate, IsDeterministicAndSummarises) {
  Table table = Load("clblast_xgemm_1_32_pocl_256.json");
  search::SimulationOptions o;
  o.strategy = tunefleet::v1::STRATEGY_GA;
  o.trials = 100;
  o.seeds = 6;
  auto a = search::Simulate(table, o);
  auto b = search::Simulate(table, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->to_95.per_seed, b->to_95.per_seed);
  for (size_t t : a->to_95.per_seed) {
    EXPECT_GE(t, 1u);
    EXPECT_LE(t, 101u);
  }
  for (size_t i = 0; i < a->to_95.per_seed.size(); ++i) {
    EXPECT_LE(a->to_95.per_seed[i], a->to_99.per_seed[i]);
  }
  auto s = search::Summarize({5, 1, 9, 3});
  EXPECT_DOUBLE_EQ(s.median, 4);
  EXPECT_DOUBLE_EQ(s.p90, 9);
  o.trials = 0;
  EXPECT_EQ(search::Simulate(table, o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Simulate, GridReachesTheBestExactlyWhereTheTableHasIt) {
  Table table = Load("clblast_xgemm_1_32_pocl_256.json");
  auto space = table.MakeSpace();
  auto rows = table.RowsByIndex();
  size_t position = 0;
  for (uint64_t index : space->valid_indices()) {
    ++position;
    if (rows.at(index)->ok && rows.at(index)->time_ms == table.best_time_ms) {
      break;
    }
  }
  search::SimulationOptions o;
  o.strategy = tunefleet::v1::STRATEGY_GRID;
  o.trials = 600;
  o.seeds = 2;
  auto r = search::Simulate(table, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->to_99.per_seed[0], position);
}

// The acceptance bar of issue 18 on every recorded table in the repository
// (CLBlast's tuner's and tunefleet's exhaustive sweeps): with the same
// defaults everywhere, xgb reaches 95% and 99% of the table's best within a
// quarter of random search's median trials, and its p90 within a quarter
// of random's p90, over 20 seeds. The budget is the table's size, so
// random search's figures are counts, not caps; a target random search
// reaches within a median of 20 trials says little and is left out.
TEST(Simulate, XgbNeedsAQuarterOfRandomsTrialsOnEveryTable) {
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           testing::SourceDir() + "/tests/data/tables")) {
    Table table = Load(entry.path().filename().string());
    search::SimulationOptions o;
    o.trials = table.rows.size();
    o.seeds = 20;
    auto results = cli::SimulateTable(
        table, {},
        {tunefleet::v1::STRATEGY_RANDOM, tunefleet::v1::STRATEGY_XGB}, o);
    ASSERT_TRUE(results.ok()) << results.status();
    const search::SimulationResult& random = (*results)[0];
    const search::SimulationResult& xgb = (*results)[1];
    for (const auto& [name, r, x] :
         {std::tuple{"95%", random.to_95, xgb.to_95},
          std::tuple{"99%", random.to_99, xgb.to_99}}) {
      if (r.median < 20) continue;
      EXPECT_LE(x.median * 4, r.median)
          << entry.path() << " to " << name << ": xgb median " << x.median
          << " random " << r.median;
      EXPECT_LE(x.p90 * 4, r.p90)
          << entry.path() << " to " << name << ": xgb p90 " << x.p90
          << " random " << r.p90;
    }
    ++tables;
  }
  EXPECT_GE(tables, 3);
}

// Two synthetic tasks whose optimum sits at the same knob values: a model
// trained on the first finds the second's optimum sooner.
std::string SyntheticTable(double shift) {
  std::string csv = "a,b,c,d,time_ms\n";
  for (int a : {1, 2, 4, 8, 16, 32})
    for (int b : {1, 2, 4, 8, 16, 32})
      for (int c : {1, 2, 4, 8})
        for (int d : {0, 1, 2}) {
          const double la = std::log2(a) - 3, lb = std::log2(b) - 2,
                       lc = std::log2(c) - 1;
          const double t = shift + 1 + la * la + 0.6 * lb * lb + 0.4 * lc * lc +
                           0.3 * (d != 1) + 0.05 * ((a * 7 + b * 3 + c) % 5);
          absl::StrAppend(&csv, a, ",", b, ",", c, ",", d, ",", t, "\n");
        }
  return csv;
}

TEST(Simulate, TransferFromAnEarlierTaskNeedsFewerTrials) {
  auto earlier = search_space::ParseTable(SyntheticTable(0.5), "earlier.csv");
  auto task = search_space::ParseTable(SyntheticTable(0.0), "task.csv");
  ASSERT_TRUE(earlier.ok() && task.ok());
  search::SimulationOptions o;
  o.trials = 200;
  o.seeds = 12;
  auto cold = cli::SimulateTable(*task, {}, {tunefleet::v1::STRATEGY_XGB}, o);
  auto warm =
      cli::SimulateTable(*task, {*earlier}, {tunefleet::v1::STRATEGY_XGB}, o);
  ASSERT_TRUE(cold.ok() && warm.ok()) << cold.status() << warm.status();
  EXPECT_LT((*warm)[0].to_99.median, (*cold)[0].to_99.median)
      << "warm " << (*warm)[0].to_99.median << " cold "
      << (*cold)[0].to_99.median;
}

// `simulate --json` reports the performance score and its range of trials;
// `--strategy random,xgb` simulates both (one row each).
TEST(SimulateCommand, JsonHasTheScore) {
  const std::string table =
      testing::SourceDir() + "/tests/data/tables/gemm_gpu_pocl_M64_N64_K64.csv";
  const testing::CommandResult r =
      testing::RunCommand(testing::CliBinary() + " simulate --table " + table +
                          " --strategy random --seeds 20 --trials 3000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("score")) << r.out;
  ASSERT_TRUE(j["score"].is_number()) << r.out;
  EXPECT_LT(std::fabs(j["score"].get<double>()), 0.5) << r.out;
  EXPECT_GE(j["score_trials"]["first"].get<int>(), 1);
  EXPECT_GE(j["score_trials"]["last"].get<int>(),
            j["score_trials"]["first"].get<int>());
}

TEST(SimulateCommand, TwoStrategiesGiveTwoRows) {
  const std::string table =
      testing::SourceDir() + "/tests/data/tables/gemm_gpu_pocl_M64_N64_K64.csv";
  const std::string command = testing::BinaryDir() +
                              "/cli/tunefleet simulate --table " + table +
                              " --strategy random,xgb --seeds 2 --trials 60";
  const testing::CommandResult text = testing::RunCommand(command);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(text.out, '\n')) {
    if (absl::StartsWith(line, "random ") || absl::StartsWith(line, "xgb ")) {
      ++rows;
    }
  }
  EXPECT_EQ(rows, 2) << text.out;
  const testing::CommandResult json = testing::RunCommand(command + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json list = nlohmann::json::parse(json.out);
  ASSERT_TRUE(list.is_array()) << json.out;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["strategy"], "random");
  EXPECT_EQ(list[1]["strategy"], "xgb");
  EXPECT_TRUE(list[1].contains("score"));
}

}  // namespace
}  // namespace tunefleet
