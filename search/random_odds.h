// The exact distribution of the trials random search needs on a recorded
// table: the limit of `Simulate(tunefleet::v1::STRATEGY_RANDOM)` over
// infinitely many seeds. With N configs of which K are within the target,
// sampling without replacement finds none of them in the first m trials with
// probability
//   P(T > m) = prod_{i=0}^{m-1} (N - K - i) / (N - i)
// (the hypergeometric zero-success probability), so each quantile is the
// smallest m with P(T <= m) >= q. Benchmarks print it beside random
// search's simulated figures, whose median over 20 seeds is itself noisy.
#ifndef TUNEFLEET_SEARCH_RANDOM_ODDS_H_
#define TUNEFLEET_SEARCH_RANDOM_ODDS_H_

#include "search/simulate.h"
#include "search_space/table.h"

namespace tunefleet::search {

// Median (q = 0.5) and p90 (q = 0.9) trials until random search's best is
// within `fraction` of the table's best (time <= best / fraction; failed
// configs count as trials and never reach it). `per_seed` stays empty.
// A table with no successful config gives N + 1 for both.
TrialsToTarget ExactRandomTrials(const search_space::Table& table,
                                 double fraction);

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_RANDOM_ODDS_H_
