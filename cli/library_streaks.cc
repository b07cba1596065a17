#include "cli/library_streaks.h"

namespace tunefleet::cli {

bool LibraryStreaks::Worth(const std::string& name) const {
  auto it = losses_.find(name);
  return it == losses_.end() || it->second < kLosingStreak;
}

void LibraryStreaks::Update(
    const tunefleet::v1::JobProgress& generated,
    const std::vector<std::pair<std::string, tunefleet::v1::JobProgress>>&
        library) {
  // The task's fastest other kernel: tuned or naive, ns; 0 when neither ran.
  double other_ns = generated.reference_time_ns();
  if (generated.has_best() &&
      (other_ns <= 0 || generated.best().time_ns() < other_ns)) {
    other_ns = generated.best().time_ns();
  }
  if (other_ns <= 0) return;  // nothing to compare with
  for (const auto& [name, job] : library) {
    const bool lost =
        !job.has_best() || job.best().time_ns() > kLosingFactor * other_ns;
    losses_[name] = lost ? losses_[name] + 1 : 0;
  }
}

std::vector<std::string> LibraryStreaks::Dropped() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : losses_) {
    if (n >= kLosingStreak) out.push_back(name);
  }
  return out;
}

}  // namespace tunefleet::cli
