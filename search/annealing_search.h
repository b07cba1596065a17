// Simulated annealing on measured times (Kirkpatrick, Gelatt and Vecchi,
// Science 1983). Several walkers move through the space one knob change at
// a time, so a batch holds one step per walker. A walker moves to the
// measured neighbour when it is faster, or when it is slower with
// probability exp(-d / T) with d = ln(t_new / t_current); T falls linearly
// from 1 to 0.02 over the budget. A walker whose neighbours are all
// measured restarts at a random config.
#ifndef TUNEFLEET_SEARCH_ANNEALING_SEARCH_H_
#define TUNEFLEET_SEARCH_ANNEALING_SEARCH_H_

#include <map>
#include <optional>
#include <vector>

#include "search/strategy.h"

namespace tunefleet::search {

class AnnealingSearch : public SearchStrategy {
 public:
  static constexpr size_t kWalkers = 8;

  AnnealingSearch(const search_space::SearchSpace& space,
                  const StrategyOptions& options);

  std::vector<uint64_t> Propose(size_t max_count) override;
  void Observe(const std::vector<Observation>& results) override;

 private:
  struct Walker {
    std::optional<uint64_t> at;  // unset until its first config ran
    double time_ns = 0;
  };
  double Temperature() const;

  ProposalSet proposals_;
  size_t budget_;
  std::vector<Walker> walkers_;
  std::map<uint64_t, size_t> pending_;  // proposed config -> its walker
  size_t next_walker_ = 0;
  size_t observed_ = 0;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_ANNEALING_SEARCH_H_
