// The performance score of a search strategy on a recorded table, from
// F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "A methodology for
// comparing optimization algorithms for auto-tuning", Future Generation
// Computer Systems, 2024, computed as its package
// (AutoTuningAssociation/autotuning_methodology) does with its defaults:
// cutoff_percentile 0.95, cutoff_percentile_start 0.5, cutoff type "function
// evaluations" (here: trials).
//
// Definitions (times in ms, trial counts from 1):
//  - N = the table's configs (every row; a failed config counts as the worst
//    time, +inf); `desc` = their times sorted worst first.
//  - median = the median of the successful times; best = the table's best.
//    Target(p) = best + (median - best) * (1 - p).
//  - The calculated random baseline (the package's
//    RandomSearchCalculatedBaseline: random search without replacement):
//    after M trials the best found sits, in expectation, at position
//    idx(M) = min(N - 1, round(M * (N + 1) / (M + 1))) of `desc` (round
//    half to even, as Python's round()), so R(M) = desc[idx(M)].
//  - Trials to reach Target(p): i = the first index of `desc` whose time is
//    <= Target(p); M(p) = the smallest M >= 1 with idx(M) >= i.
//  - The scored range: M(0.5) .. M(0.95), inclusive.
//  - The strategy's curve S(M) = the mean over seeds of the best time found
//    in the first M trials (a seed with no success yet counts the table's
//    worst successful time; a seed whose search ended before M trials keeps
//    its last best).
//  - Standardised P(M) = (S(M) - R(M)) / (best - R(M)), skipping points
//    where R(M) == best; score = the mean of P(M) over the range.
// 0 is random search, 1 the optimum from the first trial, negative worse
// than random. The package's newest versions also smooth R(M) with a
// monotone interpolation; this is the unsmoothed baseline.
#ifndef TUNEFLEET_SEARCH_SCORE_H_
#define TUNEFLEET_SEARCH_SCORE_H_

#include <cstddef>
#include <vector>

#include "search_space/table.h"

namespace tunefleet::search {

// The methodology's defaults: the range starts where random search reaches
// half of the way from the median to the best, and ends at 95%.
inline constexpr double kScoreCutoffStart = 0.5;
inline constexpr double kScoreCutoffEnd = 0.95;

// A range of trial counts, inclusive (first >= 1). Empty when last < first.
struct ScoreRange {
  size_t first = 1;
  size_t last = 0;
  bool empty() const { return last < first; }
};

// The calculated random-search baseline of one table (see above).
class RandomBaseline {
 public:
  explicit RandomBaseline(const search_space::Table& table);

  // R(M): the expected best time in ms after `trials` (>= 1) trials of
  // random search without replacement; +inf while failed configs are
  // expected to be all it has seen.
  double TimeAfter(size_t trials) const;
  // idx(M): R(M)'s position in the worst-first order (0 for trials 0).
  size_t PositionAfter(size_t trials) const;
  // M(p): trials until the expected best is at or below Target(p);
  // `fraction` in [0, 1].
  size_t TrialsToReach(double fraction) const;
  // Target(p) in ms.
  double Target(double fraction) const;

  size_t configs() const { return desc_.size(); }
  double best_ms() const { return best_ms_; }
  double median_ms() const { return median_ms_; }
  double worst_ok_ms() const { return worst_ok_ms_; }

 private:
  std::vector<double> desc_;  // every row's time, worst (+inf) first
  double best_ms_ = 0;
  double median_ms_ = 0;
  double worst_ok_ms_ = 0;
};

// M(0.5) .. M(0.95) of `table`: the trials the score averages over.
ScoreRange MethodologyRange(const search_space::Table& table);

// R(M) of `table` (see RandomBaseline::TimeAfter).
double RandomBaselineTime(const search_space::Table& table, size_t trials);

// The score of a strategy over `range` (clamp it to the budget first):
// best_so_far_per_seed[s][m - 1] is seed s's best time in ms after m
// trials (+inf or 0 while it has no success; see the definitions for
// seeds whose curve is shorter). NaN when there is no seed, the range is
// empty or every point of it was skipped.
double PerformanceScore(
    const search_space::Table& table,
    const std::vector<std::vector<double>>& best_so_far_per_seed,
    ScoreRange range);
// The same over MethodologyRange(table).
double PerformanceScore(
    const search_space::Table& table,
    const std::vector<std::vector<double>>& best_so_far_per_seed);

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_SCORE_H_
