// Checked access to the arguments of one library routine call (library.h),
// with errors that name the argument by its index and role, e.g.
// "clblast gemm: argument 4 (b): buffer 'B' has 150 elements; needs 153".
#ifndef TUNEFLEET_LIBRARY_BACKENDS_ROUTINE_ARGS_H_
#define TUNEFLEET_LIBRARY_BACKENDS_ROUTINE_ARGS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "library_backends/library.h"

namespace tunefleet::library_backends {

// The largest element count or dimension a routine accepts: CLBlast's
// kernels index buffers and pass sizes as 32-bit ints.
inline constexpr uint64_t kMaxIndex = (uint64_t{1} << 31) - 1;

// The product of `factors`, or UINT64_MAX where it would overflow (so that
// a size check against a buffer's elements refuses it).
uint64_t SaturatingProduct(std::initializer_list<uint64_t> factors);

class RoutineArgs {
 public:
  // `what` prefixes every error ("clblast gemm"); `roles` names the
  // arguments in order ("m", "n", "k", "a", ...). Both must outlive this.
  RoutineArgs(absl::string_view what, absl::Span<const LibraryArg> args,
              absl::Span<const char* const> roles)
      : what_(what), args_(args), roles_(roles) {}

  // INVALID_ARGUMENT unless there are at least `required` arguments and at
  // most one per role (the roles past `required` are optional).
  absl::Status CheckCount(size_t required) const;

  // Argument `index` as an integer in [min, max]. Errors: INVALID_ARGUMENT
  // when it is missing, not an integer or out of range.
  absl::StatusOr<uint64_t> Size(int index, uint64_t min = 1,
                                uint64_t max = kMaxIndex) const;
  // The same for an optional argument: `absent` where the call has fewer
  // arguments.
  absl::StatusOr<uint64_t> Size(int index, uint64_t min, uint64_t max,
                                uint64_t absent) const;

  // Argument `index` as a buffer of at least `min_elements` elements.
  // Errors: INVALID_ARGUMENT when it is not a buffer, is shorter, or holds
  // more than kMaxIndex elements.
  absl::StatusOr<const LibraryArg*> Buffer(int index,
                                           uint64_t min_elements) const;

  // INVALID_ARGUMENT "<what>: <message>" (shapes a routine refuses).
  absl::Status Invalid(absl::string_view message) const;

 private:
  absl::Status ArgError(int index, absl::string_view message) const;

  absl::string_view what_;
  absl::Span<const LibraryArg> args_;
  absl::Span<const char* const> roles_;
};

// The dtype all `buffers` share, DTYPE_UNSPECIFIED read as fp32. Errors:
// INVALID_ARGUMENT naming the first buffer whose dtype differs from the
// first's.
absl::StatusOr<tunefleet::v1::Dtype> CommonDtype(
    absl::string_view what, absl::Span<const LibraryArg* const> buffers);

}  // namespace tunefleet::library_backends

#endif  // TUNEFLEET_LIBRARY_BACKENDS_ROUTINE_ARGS_H_
