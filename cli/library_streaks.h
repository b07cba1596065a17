// Which library templates `tunefleet tune --onnx` keeps trying: one that
// lost by more than kLosingFactor to its task's tuned or naive kernel on
// kLosingStreak tasks of the model in a row is not tried on the rest, so
// that its trials go to the generated templates where the library is slow
// for this model's layers on this device (as Ansor's task scheduler stops
// spending on tasks that stopped paying; Zheng et al., OSDI 2020, sec. 6).
#ifndef TUNEFLEET_CLI_LIBRARY_STREAKS_H_
#define TUNEFLEET_CLI_LIBRARY_STREAKS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

class LibraryStreaks {
 public:
  static constexpr double kLosingFactor = 2;
  static constexpr int kLosingStreak = 3;

  // Whether the library template `name` is still worth a task's trials.
  bool Worth(const std::string& name) const;

  // Counts one task: `generated` is its generated template's job (best time
  // and naive reference time), `library` the library templates' jobs that
  // ran on it, by template name. A library job without a result counts as
  // lost; a win or a near miss ends the template's streak.
  void Update(
      const tunefleet::v1::JobProgress& generated,
      const std::vector<std::pair<std::string, tunefleet::v1::JobProgress>>&
          library);

  // The templates no longer tried, by name.
  std::vector<std::string> Dropped() const;

 private:
  std::map<std::string, int> losses_;  // current streak per template
};

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_LIBRARY_STREAKS_H_
