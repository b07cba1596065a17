// Early-return helpers for absl::Status and absl::StatusOr.
#ifndef TUNEFLEET_SERVER_STATUS_MACROS_H_
#define TUNEFLEET_SERVER_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TF_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    if (absl::Status _tf_s = (expr); !_tf_s.ok()) { \
      return _tf_s;                                 \
    }                                               \
  } while (0)

#define TF_CONCAT_INNER(a, b) a##b
#define TF_CONCAT(a, b) TF_CONCAT_INNER(a, b)

// TF_ASSIGN_OR_RETURN(auto x, MakeX()); declares x or returns the error.
#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL(TF_CONCAT(_tf_or_, __LINE__), lhs, expr)
#define TF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = *std::move(tmp)

#endif  // TUNEFLEET_SERVER_STATUS_MACROS_H_
