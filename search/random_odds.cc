#include "search/random_odds.h"

namespace tunefleet::search {

TrialsToTarget ExactRandomTrials(const search_space::Table& table,
                                 double fraction) {
  const size_t n = table.rows.size();
  size_t k = 0;
  if (table.best_time_ms > 0 && fraction > 0) {
    for (const search_space::Table::Row& row : table.rows) {
      k += row.ok && row.time_ms <= table.best_time_ms / fraction;
    }
  }
  TrialsToTarget out;
  out.median = out.p90 = static_cast<double>(n + 1);
  if (k == 0) return out;
  double none_yet = 1.0;  // P(T > m)
  bool have_median = false;
  for (size_t m = 1; m <= n; ++m) {
    none_yet *=
        static_cast<double>(n - k - (m - 1)) / static_cast<double>(n - (m - 1));
    // The tolerance keeps exact quantiles (m / N for K = 1) from rounding
    // to the next trial.
    if (!have_median && 1.0 - none_yet >= 0.5 - 1e-12) {
      out.median = static_cast<double>(m);
      have_median = true;
    }
    if (1.0 - none_yet >= 0.9 - 1e-12) {
      out.p90 = static_cast<double>(m);
      break;
    }
  }
  return out;
}

}  // namespace tunefleet::search
