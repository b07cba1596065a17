#include "search/annealing_search.h"

#include <algorithm>
#include <cmath>

namespace tunefleet::search {

AnnealingSearch::AnnealingSearch(const search_space::SearchSpace& space,
                                 const StrategyOptions& options)
    : proposals_(space, options.seed),
      budget_(std::max<size_t>(options.budget_hint, 1)),
      walkers_(kWalkers) {}

double AnnealingSearch::Temperature() const {
  const double progress = std::min(1.0, double(observed_) / double(budget_));
  return std::max(0.02, 1.0 - progress);
}

std::vector<uint64_t> AnnealingSearch::Propose(size_t max_count) {
  std::vector<uint64_t> out;
  for (size_t slot = 0; slot < max_count; ++slot) {
    const size_t w = next_walker_++ % walkers_.size();
    std::optional<uint64_t> next;
    if (walkers_[w].at) next = proposals_.RandomNeighbour(*walkers_[w].at);
    if (next) {
      proposals_.Mark(*next);
    } else {
      next = proposals_.DrawRandom();  // first step or a restart
      if (!next) break;
      walkers_[w].at.reset();
    }
    pending_[*next] = w;
    out.push_back(*next);
  }
  return out;
}

void AnnealingSearch::Observe(const std::vector<Observation>& results) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (const Observation& r : results) {
    ++observed_;
    auto it = pending_.find(r.index);
    if (it == pending_.end()) continue;
    Walker& walker = walkers_[it->second];
    pending_.erase(it);
    if (!r.ok || r.time_ns <= 0) continue;  // failures are never accepted
    if (!walker.at) {
      walker.at = r.index;
      walker.time_ns = r.time_ns;
      continue;
    }
    const double delta = std::log(r.time_ns / walker.time_ns);
    if (delta <= 0 ||
        uniform(proposals_.rng()) < std::exp(-delta / Temperature())) {
      walker.at = r.index;
      walker.time_ns = r.time_ns;
    }
  }
}

}  // namespace tunefleet::search
