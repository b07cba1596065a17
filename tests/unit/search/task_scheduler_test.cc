// The model job's task scheduler (search/task_scheduler.h) against a tiny
// synthetic device: each task's trials draw times from a distribution with
// a known optimum, so the rules can be compared on the estimated latency.
#include "search/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tunefleet::search {
namespace {

using Rule = TaskSchedulerOptions::Rule;

// One task on the synthetic device: a trial takes
// opt_ns x (1 + spread x u^shape), u uniform in [0, 1), so the best of n
// trials nears opt_ns as n grows; the naive kernel takes ref_ns.
struct SimTask {
  SchedulerTask task;
  double opt_ns = 1000;
  double ref_ns = 3000;
  double spread = 3;
  double shape = 1;
};

class SimDevice {
 public:
  SimDevice(std::vector<SimTask> tasks, uint64_t seed) : tasks_(tasks) {
    for (size_t i = 0; i < tasks_.size(); ++i) {
      // One stream per task: its k-th trial takes the same time whatever
      // the order of grants (the rules see the same device).
      rngs_.emplace_back(seed * 1000003 + i);
      results_.emplace_back();
    }
  }
  std::vector<SchedulerTask> scheduler_tasks() const {
    std::vector<SchedulerTask> out;
    for (const auto& t : tasks_) out.push_back(t.task);
    return out;
  }
  // Measures `trials` trials of task i; returns its results.
  const TaskResults& Measure(size_t i, int64_t trials) {
    TaskResults& r = results_[i];
    const SimTask& t = tasks_[i];
    r.reference_ns = t.ref_ns;
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t k = 0; k < trials; ++k) {
      const double ns =
          t.opt_ns * (1 + t.spread * std::pow(u(rngs_[i]), t.shape));
      if (r.best_ns <= 0 || ns < r.best_ns) r.best_ns = ns;
      ++r.done;
    }
    return r;
  }
  TaskResults& results(size_t i) { return results_[i]; }
  size_t size() const { return tasks_.size(); }

 private:
  std::vector<SimTask> tasks_;
  std::vector<std::mt19937_64> rngs_;
  std::vector<TaskResults> results_;
};

struct CurvePoint {
  int64_t trials = 0;
  double latency_ns = 0;
  bool complete = false;  // every workload has a figure
};

// Drives a scheduler to the end, one grant measured at a time; returns the
// estimated latency after each grant.
std::vector<CurvePoint> RunSync(TaskScheduler& s, SimDevice& dev) {
  std::vector<CurvePoint> curve;
  int64_t trials = 0;
  while (auto g = s.Next()) {
    EXPECT_LE(s.granted(), s.budget());
    s.Update(g->task, dev.Measure(g->task, g->trials));
    trials += g->trials;
    bool complete = false;
    const double latency = s.LatencyNs(&complete);
    curve.push_back({trials, latency, complete});
  }
  return curve;
}

// A CNN-like model: a few heavy convolutions hold most of the latency, a
// long tail of light tasks (elementwise, pooling, small convs) the rest.
std::vector<SimTask> CnnLikeModel(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<SimTask> out;
  const char* tags[] = {"conv", "matmul", "pool", "add"};
  const double peak[] = {40, 30, 2, 1};  // flops per ns at the optimum
  for (int i = 0; i < n; ++i) {
    SimTask t;
    const int tag = i < n / 2 ? 0 : (i < n / 2 + 4 ? 1 : 2 + i % 2);
    // Times spread over three orders of magnitude; the first few heavy.
    const double scale = i < 4 ? 2e6 : 1e3 * std::pow(100.0, u(rng));
    t.opt_ns = scale * (0.5 + u(rng));
    t.ref_ns = t.opt_ns * (2 + 6 * u(rng));
    t.spread = 2 + 6 * u(rng);
    // Best of n trials ~ opt x (1 + spread / n^shape): a large space where
    // tens of trials per task are far from converged, as in Ansor's runs.
    t.shape = 0.3 + 0.5 * u(rng);
    t.task.workload = absl::StrCat("w", i);
    t.task.similarity_tag = tags[tag];
    t.task.weight = 1 + static_cast<int>(3 * u(rng));
    t.task.flops = t.opt_ns * peak[tag] * (0.5 + 0.5 * u(rng));
    out.push_back(t);
  }
  return out;
}

TEST(TaskScheduler, BatchFromBudgetAndTasks) {
  std::vector<SchedulerTask> tasks(10);
  EXPECT_EQ(TaskScheduler(tasks, {.budget = 200}).batch(), 5);
  EXPECT_EQ(TaskScheduler(tasks, {.budget = 20}).batch(), 1);
  EXPECT_EQ(TaskScheduler(tasks, {.budget = 10000}).batch(), 8);
  EXPECT_EQ(TaskScheduler(tasks, {.budget = 10000, .batch = 3}).batch(), 3);
}

TEST(TaskScheduler, LatencySumsWorkloadTermsWithTheFastestTime) {
  std::vector<SchedulerTask> tasks = {
      {.workload = "a", .similarity_tag = "conv", .weight = 2},
      {.workload = "a", .similarity_tag = "conv", .weight = 2},  // library
      {.workload = "b", .similarity_tag = "add", .weight = 3},
  };
  TaskScheduler s(tasks, {.budget = 100});
  bool complete = true;
  EXPECT_EQ(s.LatencyNs(&complete), 0);
  EXPECT_FALSE(complete);
  s.Update(0, {.done = 0, .best_ns = 0, .reference_ns = 500});
  s.Update(1, {.done = 0, .best_ns = 400});
  EXPECT_DOUBLE_EQ(s.LatencyNs(&complete), 2 * 400);
  EXPECT_FALSE(complete);  // b has no figure
  EXPECT_DOUBLE_EQ(s.NaiveLatencyNs(), 2 * 500);
  s.Update(2, {.done = 0, .best_ns = 90, .reference_ns = 70});
  s.Update(0, {.done = 0, .best_ns = 300, .reference_ns = 500});
  EXPECT_DOUBLE_EQ(s.LatencyNs(&complete), 2 * 300 + 3 * 70);
  EXPECT_TRUE(complete);
  EXPECT_DOUBLE_EQ(s.NaiveLatencyNs(), 2 * 500 + 3 * 70);
}

// Random per-task results, grants measured out of order, some tasks'
// jobs ending with trials unmeasured: the grants never pass the budget and
// the budget is spent to the last trial.
void CheckBudgetNeverExceeded(Rule rule, uint64_t seed) {
  SCOPED_TRACE(testing::Message()
               << "rule " << static_cast<int>(rule) << " seed " << seed);
  SimDevice dev(CnnLikeModel(12, seed), seed);
  TaskScheduler s(dev.scheduler_tasks(),
                  {.rule = rule, .budget = 173, .batch = 4, .seed = seed});
  std::mt19937_64 rng(seed);
  struct Pending {
    size_t task;
    int64_t left;
  };
  std::vector<Pending> pending;
  std::vector<bool> ended(dev.size(), false);
  int ends = 0;
  for (int step = 0; step < 100000; ++step) {
    const bool busy_ok = rng() % 2 == 0;
    if (pending.size() < 3) {
      if (auto g = s.Next(busy_ok)) {
        ASSERT_FALSE(ended[g->task]);
        ASSERT_GT(g->trials, 0);
        ASSERT_LE(g->trials, s.batch());
        pending.push_back({g->task, g->trials});
        ASSERT_LE(s.granted(), s.budget());
        continue;
      }
    }
    if (pending.empty()) break;
    // Measure part of a random pending grant.
    const size_t p = rng() % pending.size();
    const size_t t = pending[p].task;
    const int64_t n = 1 + static_cast<int64_t>(rng() % pending[p].left);
    TaskResults r = dev.Measure(t, n);
    pending[p].left -= n;
    if (pending[p].left == 0) pending.erase(pending.begin() + p);
    if (ends < 3 && rng() % 20 == 0) {  // the task's job ends early
      ++ends;
      ended[t] = true;
      r.ended = true;
      r.ended_reason = "space exhausted";
      dev.results(t) = r;
      std::erase_if(pending, [t](const Pending& x) { return x.task == t; });
    }
    s.Update(t, r);
    ASSERT_LE(s.granted(), s.budget());
  }
  ASSERT_TRUE(pending.empty());
  EXPECT_GT(ends, 0);
  int64_t measured = 0;
  int64_t sum_granted = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    measured += dev.results(i).done;
    sum_granted += s.granted(i);
    if (ended[i]) {
      EXPECT_EQ(s.StoppedReason(i), "space exhausted");
    }
  }
  EXPECT_EQ(sum_granted, s.granted());
  EXPECT_EQ(measured, s.granted());
  EXPECT_TRUE(s.Finished());
  bool all_stopped = true;
  for (size_t i = 0; i < dev.size(); ++i) {
    all_stopped &= !s.StoppedReason(i).empty();
  }
  if (!all_stopped) {
    EXPECT_EQ(measured, s.budget());
  }
  EXPECT_LE(measured, s.budget());
}

TEST(TaskScheduler, BudgetNeverExceededGradient) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CheckBudgetNeverExceeded(Rule::kGradient, seed);
  }
}

TEST(TaskScheduler, BudgetNeverExceededRoundRobin) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CheckBudgetNeverExceeded(Rule::kRoundRobin, seed);
  }
}

TEST(TaskScheduler, LastGrantIsWhatIsLeft) {
  std::vector<SchedulerTask> tasks(3);
  TaskScheduler s(tasks, {.rule = Rule::kRoundRobin, .budget = 10, .batch = 4});
  std::vector<int64_t> got;
  while (auto g = s.Next(/*busy_ok=*/true)) got.push_back(g->trials);
  EXPECT_EQ(got, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(s.granted(), 10);
  EXPECT_TRUE(s.Finished());
}

TEST(TaskScheduler, RoundRobinGivesEqualGrants) {
  SimDevice dev(CnnLikeModel(10, 7), 7);
  TaskScheduler s(dev.scheduler_tasks(),
                  {.rule = Rule::kRoundRobin, .budget = 403, .batch = 4});
  RunSync(s, dev);
  EXPECT_EQ(s.granted(), 403);
  int64_t lo = s.granted(0), hi = s.granted(0);
  for (size_t i = 0; i < s.size(); ++i) {
    lo = std::min(lo, s.granted(i));
    hi = std::max(hi, s.granted(i));
    EXPECT_EQ(s.StoppedReason(i), "");  // no stall rule in round robin
  }
  EXPECT_LE(hi - lo, s.batch());
  EXPECT_EQ(lo, 40);
}

TEST(TaskScheduler, RoundRobinCyclesInTaskOrder) {
  std::vector<SchedulerTask> tasks(3);
  TaskScheduler s(tasks,
                  {.rule = Rule::kRoundRobin, .budget = 100, .batch = 2});
  std::vector<size_t> order;
  for (int k = 0; k < 7; ++k) {
    auto g = s.Next();
    ASSERT_TRUE(g.has_value());
    order.push_back(g->task);
    s.Update(g->task, {.done = s.granted(g->task), .best_ns = 10});
  }
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(TaskScheduler, GradientGivesTheHeavyTaskFarMoreTrials) {
  std::vector<SimTask> model;
  for (int i = 0; i < 5; ++i) {
    SimTask t;
    t.task.workload = absl::StrCat("w", i);
    t.task.similarity_tag = "conv";
    t.opt_ns = 1000;
    t.ref_ns = 3000;
    t.task.flops = 1000 * 10;
    t.shape = 0.7;
    model.push_back(t);
  }
  model[2].task.weight = 10;  // weight x time 100x the others'
  model[2].opt_ns *= 10;
  model[2].ref_ns *= 10;
  model[2].task.flops *= 10;
  SimDevice dev(model, 3);
  // The allocation alone: no task stops (the stall rule has its tests).
  TaskScheduler s(dev.scheduler_tasks(),
                  {.budget = 400, .batch = 4, .stall_rounds = 0});
  RunSync(s, dev);
  EXPECT_EQ(s.granted(), 400);
  for (size_t i = 0; i < s.size(); ++i) {
    std::printf("task %zu: %lld trials\n", i,
                static_cast<long long>(s.granted(i)));
    if (i != 2) {
      EXPECT_GT(s.granted(2), 10 * s.granted(i));
    }
  }
}

TEST(TaskScheduler, GradientFavorsATaskFarBelowItsSimilarTasksThroughput) {
  // Two convolutions of the same times and weights; task 0 does 1/8 of the
  // flops per ns of task 1, so its bound promises more.
  std::vector<SimTask> model(2);
  for (int i = 0; i < 2; ++i) {
    model[i].task.workload = absl::StrCat("w", i);
    model[i].task.similarity_tag = "conv";
    model[i].shape = 0.5;
  }
  model[0].task.flops = 1000 * 5;
  model[1].task.flops = 1000 * 40;
  SimDevice dev(model, 9);
  TaskScheduler s(dev.scheduler_tasks(),
                  {.budget = 200, .batch = 4, .stall_rounds = 0});
  RunSync(s, dev);
  std::printf("far from the bound: %lld trials; at it: %lld\n",
              static_cast<long long>(s.granted(0)),
              static_cast<long long>(s.granted(1)));
  EXPECT_GT(s.granted(0), 3 * s.granted(1));
}

TEST(TaskScheduler, GradientFavorsTheFastestTemplateOfAWorkload) {
  // One workload, two templates: task 0 at 1000 ns, task 1 at 500 ns. Task
  // 0's trials lower the model's latency only once it passes 500 ns.
  std::vector<SchedulerTask> tasks = {{.workload = "x"}, {.workload = "x"}};
  TaskScheduler s(tasks,
                  {.budget = 200, .batch = 4, .epsilon = 0, .stall_rounds = 0});
  const double best[] = {1000, 500};
  while (auto g = s.Next()) {
    s.Update(g->task, {.done = s.granted(g->task), .best_ns = best[g->task]});
  }
  EXPECT_GT(s.granted(1), 4 * s.granted(0));
}

TEST(TaskScheduler, BackwardGradientFollowsRecentImprovement) {
  // The backward term alone (alpha 1): task 0 gets 10% faster with every
  // round, task 1 never does; both start at 1000 ns.
  std::vector<SchedulerTask> tasks = {{.workload = "a"}, {.workload = "b"}};
  TaskScheduler s(tasks, {.budget = 200,
                          .batch = 4,
                          .alpha = 1,
                          .window = 1,
                          .epsilon = 0,
                          .stall_rounds = 0});
  int rounds0 = 0;
  while (auto g = s.Next()) {
    const double best = g->task == 0 ? 1000 * std::pow(0.9, rounds0++) : 1000.0;
    s.Update(g->task, {.done = s.granted(g->task), .best_ns = best});
  }
  EXPECT_GT(s.granted(0), 3 * s.granted(1));
}

TEST(TaskScheduler, GradientWarmsUpHeaviestFirst) {
  std::vector<SchedulerTask> tasks = {
      {.workload = "a", .weight = 1, .flops = 100},
      {.workload = "b", .weight = 1},
      {.workload = "c", .weight = 1, .flops = 5000},
      {.workload = "d", .weight = 2},
  };
  TaskScheduler s(tasks, {.budget = 100, .batch = 2, .epsilon = 0});
  s.Update(1, {.reference_ns = 10});  // known before any trial
  std::vector<size_t> order;
  for (int k = 0; k < 4; ++k) {
    auto g = s.Next(/*busy_ok=*/true);
    ASSERT_TRUE(g.has_value());
    order.push_back(g->task);
  }
  // A time figure first, then weight x flops, then the weight alone.
  EXPECT_EQ(order, (std::vector<size_t>{1, 2, 0, 3}));
}

// The acceptance, on the synthetic device: the gradient rule
// reaches the latency that round robin ends with in at most half of the
// budget.
TEST(TaskScheduler, GradientReachesRoundRobinsLatencyWithHalfTheTrials) {
  const int kTasks = 50;
  const int64_t kBudget = 50 * 16;
  int failures = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const std::vector<SimTask> model = CnnLikeModel(kTasks, seed);
    SimDevice rr_dev(model, seed);
    TaskScheduler rr(rr_dev.scheduler_tasks(),
                     {.rule = Rule::kRoundRobin, .budget = kBudget});
    const std::vector<CurvePoint> rr_curve = RunSync(rr, rr_dev);
    SimDevice gr_dev(model, seed);
    TaskScheduler gr(gr_dev.scheduler_tasks(),
                     {.budget = kBudget, .seed = seed});
    const std::vector<CurvePoint> gr_curve = RunSync(gr, gr_dev);
    ASSERT_FALSE(rr_curve.empty());
    ASSERT_FALSE(gr_curve.empty());
    const double target = rr_curve.back().latency_ns;
    int64_t reached = -1;
    ASSERT_TRUE(rr_curve.back().complete);
    for (const auto& p : gr_curve) {
      if (p.complete && p.latency_ns <= target) {
        reached = p.trials;
        break;
      }
    }
    std::printf("seed %llu: naive %.4f ms; batch %lld\n",
                static_cast<unsigned long long>(seed),
                gr.NaiveLatencyNs() / 1e6, static_cast<long long>(gr.batch()));
    std::printf("  %8s %14s %14s\n", "trials", "round robin ms", "gradient ms");
    // The estimate after `trials`, ms; "-" while some workload has no
    // figure yet (the warm-up).
    auto at = [](const std::vector<CurvePoint>& c, int64_t trials) {
      std::string l = "-";
      for (const auto& p : c) {
        if (p.trials > trials) break;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4f", p.latency_ns / 1e6);
        l = p.complete ? buf : "-";
      }
      return l;
    };
    for (int pct = 10; pct <= 100; pct += 10) {
      const int64_t t = kBudget * pct / 100;
      std::printf("  %8lld %14s %14s\n", static_cast<long long>(t),
                  at(rr_curve, t).c_str(), at(gr_curve, t).c_str());
    }
    int stopped = 0;
    for (size_t i = 0; i < gr.size(); ++i)
      stopped += !gr.StoppedReason(i).empty();
    std::printf(
        "  round robin ends at %.4f ms; gradient reaches it after %lld "
        "trials (%lld%% of the budget), ends at %.4f ms after %lld trials; "
        "%d tasks stopped\n",
        target / 1e6, static_cast<long long>(reached),
        static_cast<long long>(reached * 100 / kBudget),
        gr_curve.back().latency_ns / 1e6,
        static_cast<long long>(gr_curve.back().trials), stopped);
    EXPECT_GT(reached, 0);
    EXPECT_LE(reached, kBudget / 2);
    failures += reached <= 0 || reached > kBudget / 2;
  }
  EXPECT_EQ(failures, 0);
}

TEST(TaskScheduler, EndedTasksUnmeasuredGrantReturnsToTheBudget) {
  std::vector<SchedulerTask> tasks(2);
  tasks[0].workload = "a";
  tasks[1].workload = "b";
  TaskScheduler s(tasks,
                  {.budget = 8, .batch = 4, .epsilon = 0, .warmup_trials = 0});
  auto g0 = s.Next();
  auto g1 = s.Next();
  ASSERT_TRUE(g0 && g1);
  EXPECT_EQ(g0->trials + g1->trials, 8);
  EXPECT_EQ(s.granted(), 8);
  EXPECT_FALSE(s.Next(/*busy_ok=*/true).has_value());
  EXPECT_TRUE(s.Finished());
  // Task a's job ends after 1 of its 4 trials: 3 return.
  s.Update(g0->task, {.done = 1,
                      .best_ns = 50,
                      .ended = true,
                      .ended_reason = "space exhausted"});
  EXPECT_EQ(s.granted(), 5);
  EXPECT_EQ(s.granted(g0->task), 1);
  EXPECT_EQ(s.StoppedReason(g0->task), "space exhausted");
  EXPECT_FALSE(s.Finished());
  EXPECT_FALSE(s.Next().has_value());  // b is still busy
  s.Update(g1->task, {.done = 4, .best_ns = 70});
  auto g = s.Next();
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->task, g1->task);
  EXPECT_EQ(g->trials, 3);
  EXPECT_EQ(s.granted(), 8);
  EXPECT_TRUE(s.Finished());
}

TEST(TaskScheduler, RestoreGrantedContinues) {
  // Round robin: after a restart with 8, 4 and 0 trials granted, the
  // tasks that had fewer catch up first.
  {
    std::vector<SchedulerTask> tasks(3);
    TaskScheduler s(tasks,
                    {.rule = Rule::kRoundRobin, .budget = 24, .batch = 4});
    s.RestoreGranted(0, 8);
    s.RestoreGranted(1, 4);
    s.Update(0, {.done = 8, .best_ns = 5});
    s.Update(1, {.done = 3, .best_ns = 5});  // one trial still to measure
    EXPECT_EQ(s.granted(), 12);
    std::vector<size_t> order;
    while (auto g = s.Next(/*busy_ok=*/true)) order.push_back(g->task);
    EXPECT_EQ(order, (std::vector<size_t>{2, 1, 2}));
    EXPECT_EQ(s.granted(), 24);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(s.granted(i), 8);
  }
  // Gradient: the task without grants has its warm-up first; then the
  // grants go on within the budget.
  {
    SimDevice dev(CnnLikeModel(3, 5), 5);
    TaskScheduler s(dev.scheduler_tasks(), {.budget = 40, .batch = 4});
    s.RestoreGranted(0, 12);
    s.RestoreGranted(1, 4);
    s.Update(0, dev.Measure(0, 12));
    s.Update(1, dev.Measure(1, 4));
    auto g = s.Next();
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->task, 2u);
    s.Update(2, dev.Measure(2, g->trials));
    RunSync(s, dev);
    EXPECT_EQ(s.granted(), 40);
    int64_t measured = 0;
    for (size_t i = 0; i < 3; ++i) measured += dev.results(i).done;
    EXPECT_EQ(measured, 40);
    EXPECT_GE(s.granted(0), 12);
    EXPECT_GE(s.granted(1), 4);
  }
}

TEST(TaskScheduler, StallRuleStopsATask) {
  // The only task never improves after its warm-up: it stops after
  // stall_rounds more rounds although budget is left.
  std::vector<SchedulerTask> tasks(1);
  TaskScheduler s(
      tasks,
      {.budget = 1000, .batch = 4, .stall_rounds = 3, .warmup_trials = 0});
  int grants = 0;
  while (auto g = s.Next()) {
    ++grants;
    s.Update(g->task, {.done = s.granted(0), .best_ns = 100});
    ASSERT_LT(grants, 100);
  }
  EXPECT_EQ(grants, 1 + 3);
  EXPECT_EQ(s.StoppedReason(0), "no improvement in 3 rounds");
  EXPECT_TRUE(s.Finished());
  EXPECT_EQ(s.granted(), 16);
}

TEST(TaskScheduler, HeavierTasksWaitLongerBeforeStopping) {
  // Terms 900 and 100 ns: the mean is 500, so the heavy task waits
  // ceil(4 x 1.8) = 8 rounds, the light one 4.
  std::vector<SchedulerTask> tasks = {{.workload = "heavy"},
                                      {.workload = "light"}};
  TaskScheduler s(
      tasks, {.budget = 1000, .batch = 2, .epsilon = 0, .warmup_trials = 0});
  const double best[] = {900, 100};
  int grants = 0;
  while (auto g = s.Next()) {
    s.Update(g->task, {.done = s.granted(g->task), .best_ns = best[g->task]});
    ASSERT_LT(++grants, 100);
  }
  EXPECT_EQ(s.StoppedReason(0), "no improvement in 8 rounds");
  EXPECT_EQ(s.StoppedReason(1), "no improvement in 4 rounds");
  EXPECT_EQ(s.granted(0), 2 * (1 + 8));
  EXPECT_EQ(s.granted(1), 2 * (1 + 4));
  EXPECT_TRUE(s.Finished());
}

TEST(TaskScheduler, ImprovementResetsTheStallCount) {
  std::vector<SchedulerTask> tasks(1);
  TaskScheduler s(tasks, {.budget = 1000, .batch = 2, .stall_rounds = 2});
  // Best per round: warm-up 100, then 100 (stall 1), 90 (reset), 90, 90.
  const double best[] = {100, 100, 90, 90, 90, 80};
  int grants = 0;
  while (auto g = s.Next()) {
    s.Update(0, {.done = s.granted(0), .best_ns = best[grants]});
    ++grants;
    ASSERT_LT(grants, 6);
  }
  EXPECT_EQ(grants, 5);
  EXPECT_EQ(s.StoppedReason(0), "no improvement in 2 rounds");
}

TEST(TaskScheduler, BusyTasksWaitUnlessBusyOk) {
  std::vector<SchedulerTask> tasks(2);
  TaskScheduler s(tasks, {.budget = 100, .batch = 4, .warmup_trials = 0});
  ASSERT_TRUE(s.Next().has_value());
  ASSERT_TRUE(s.Next().has_value());
  EXPECT_FALSE(s.Next().has_value());  // both measuring
  EXPECT_FALSE(s.Finished());
  auto g = s.Next(/*busy_ok=*/true);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(s.granted(), 12);
}

TEST(TaskScheduler, SameSeedSameGrants) {
  auto run = [](uint64_t seed) {
    SimDevice dev(CnnLikeModel(20, 11), 11);
    TaskScheduler s(dev.scheduler_tasks(),
                    {.budget = 300, .epsilon = 0.3, .seed = seed});
    std::vector<size_t> order;
    while (auto g = s.Next()) {
      order.push_back(g->task);
      s.Update(g->task, dev.Measure(g->task, g->trials));
    }
    return order;
  };
  const auto a = run(42);
  EXPECT_EQ(a, run(42));
  EXPECT_NE(a, run(43));  // the seed does drive the random picks
}

TEST(TaskScheduler, GradientWarmsUpWithOneTrialThenGrantsBatches) {
  std::vector<SchedulerTask> tasks(2);
  tasks[0].workload = "a";
  tasks[1].workload = "b";
  for (const auto& [rule, first] : {std::pair{Rule::kGradient, int64_t{1}},
                                    std::pair{Rule::kRoundRobin, int64_t{4}}}) {
    TaskScheduler s(tasks,
                    {.rule = rule, .budget = 100, .batch = 4, .epsilon = 0});
    auto a = s.Next();
    auto b = s.Next();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->trials, first);
    EXPECT_EQ(b->trials, first);
    s.Update(a->task, {.done = first, .best_ns = 100, .reference_ns = 200});
    auto again = s.Next();
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->task, a->task);
    EXPECT_EQ(again->trials, 4);
  }
}

}  // namespace
}  // namespace tunefleet::search
