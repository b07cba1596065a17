#include "library_backends/routine_args.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet::library_backends {

using tunefleet::v1::Dtype;

namespace {

Dtype Normalized(Dtype dtype) {
  return dtype == tunefleet::v1::DTYPE_UNSPECIFIED ? tunefleet::v1::DTYPE_FP32
                                                   : dtype;
}

absl::string_view DtypeName(Dtype dtype) {
  return Normalized(dtype) == tunefleet::v1::DTYPE_FP16 ? "fp16" : "fp32";
}

}  // namespace

uint64_t SaturatingProduct(std::initializer_list<uint64_t> factors) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (uint64_t f : factors) {
    if (f == 0) return 0;
  }
  uint64_t product = 1;
  for (uint64_t f : factors) {
    if (product > kMax / f) return kMax;
    product *= f;
  }
  return product;
}

absl::Status RoutineArgs::CheckCount(size_t required) const {
  if (args_.size() >= required && args_.size() <= roles_.size()) {
    return absl::OkStatus();
  }
  const std::string optional =
      required < roles_.size()
          ? absl::StrCat(" [", absl::StrJoin(roles_.subspan(required), ", "),
                         "]")
          : "";
  return absl::InvalidArgumentError(
      absl::StrCat(what_, " takes arguments (",
                   absl::StrJoin(roles_.subspan(0, required), ", "), optional,
                   "); got ", args_.size()));
}

absl::Status RoutineArgs::ArgError(int index, absl::string_view message) const {
  const absl::string_view role =
      index >= 0 && static_cast<size_t>(index) < roles_.size() ? roles_[index]
                                                               : "?";
  return absl::InvalidArgumentError(
      absl::StrCat(what_, ": argument ", index, " (", role, "): ", message));
}

absl::Status RoutineArgs::Invalid(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(what_, ": ", message));
}

absl::StatusOr<uint64_t> RoutineArgs::Size(int index, uint64_t min,
                                           uint64_t max) const {
  if (index < 0 || static_cast<size_t>(index) >= args_.size()) {
    return ArgError(index, "missing");
  }
  const LibraryArg& arg = args_[index];
  if (arg.kind != LibraryArg::Kind::kInteger) {
    return ArgError(index, "must be an integer");
  }
  if (arg.integer < 0 || static_cast<uint64_t>(arg.integer) < min ||
      static_cast<uint64_t>(arg.integer) > max) {
    return ArgError(
        index, absl::StrCat(arg.integer, " is outside [", min, ", ", max, "]"));
  }
  return static_cast<uint64_t>(arg.integer);
}

absl::StatusOr<uint64_t> RoutineArgs::Size(int index, uint64_t min,
                                           uint64_t max,
                                           uint64_t absent) const {
  if (index >= 0 && static_cast<size_t>(index) >= args_.size()) return absent;
  return Size(index, min, max);
}

absl::StatusOr<const LibraryArg*> RoutineArgs::Buffer(
    int index, uint64_t min_elements) const {
  if (index < 0 || static_cast<size_t>(index) >= args_.size()) {
    return ArgError(index, "missing");
  }
  const LibraryArg& arg = args_[index];
  if (arg.kind != LibraryArg::Kind::kBuffer || arg.buffer == nullptr) {
    return ArgError(index, "must be a buffer");
  }
  if (arg.elements < min_elements) {
    return ArgError(index,
                    absl::StrCat("buffer '", arg.name, "' has ", arg.elements,
                                 " elements; needs ", min_elements));
  }
  if (min_elements > kMaxIndex) {
    return ArgError(index,
                    absl::StrCat("needs ", min_elements, " elements; at most ",
                                 kMaxIndex, " are supported"));
  }
  return &arg;
}

absl::StatusOr<Dtype> CommonDtype(absl::string_view what,
                                  absl::Span<const LibraryArg* const> buffers) {
  if (buffers.empty()) return tunefleet::v1::DTYPE_FP32;
  const Dtype first = Normalized(buffers[0]->dtype);
  for (const LibraryArg* buffer : buffers) {
    if (Normalized(buffer->dtype) != first) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": buffer '", buffer->name, "' is ", DtypeName(buffer->dtype),
          " and buffer '", buffers[0]->name, "' is ", DtypeName(first),
          "; all must have one dtype"));
    }
  }
  return first;
}

}  // namespace tunefleet::library_backends
