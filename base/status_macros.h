// Early-return helpers for absl::Status and absl::StatusOr, under the
// project's prefix (as Abseil's internal and gRPC's own macros are).
#ifndef TUNEFLEET_BASE_STATUS_MACROS_H_
#define TUNEFLEET_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// TUNEFLEET_RETURN_IF_ERROR(DoIt()); returns DoIt()'s status unless OK.
#define TUNEFLEET_RETURN_IF_ERROR(expr)                           \
  do {                                                            \
    if (absl::Status _tunefleet_s = (expr); !_tunefleet_s.ok()) { \
      return _tunefleet_s;                                        \
    }                                                             \
  } while (0)

#define TUNEFLEET_CONCAT_INNER(a, b) a##b
#define TUNEFLEET_CONCAT(a, b) TUNEFLEET_CONCAT_INNER(a, b)

// TUNEFLEET_ASSIGN_OR_RETURN(auto x, MakeX()); declares x or returns the
// error.
#define TUNEFLEET_ASSIGN_OR_RETURN(lhs, expr)                                 \
  TUNEFLEET_ASSIGN_OR_RETURN_IMPL(TUNEFLEET_CONCAT(_tunefleet_or_, __LINE__), \
                                  lhs, expr)
#define TUNEFLEET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = *std::move(tmp)

#endif  // TUNEFLEET_BASE_STATUS_MACROS_H_
