// libFuzzer target: .npy files (base/npy.h), the inputs users give
// `tunefleet run --input`. An array that parses has as many floats as its
// shape says, and its own serialization parses back to the same array.
// Nothing may crash, leak or hit undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunefleet::base::NpyArray> a =
      tunefleet::base::ParseNpy(bytes);
  if (!a.ok()) return 0;
  if (static_cast<int64_t>(a->data.size()) != a->elements()) {
    std::fprintf(stderr, "%zu floats for %lld elements\n", a->data.size(),
                 static_cast<long long>(a->elements()));
    std::abort();
  }
  absl::StatusOr<tunefleet::base::NpyArray> again =
      tunefleet::base::ParseNpy(tunefleet::base::SerializeNpy(*a));
  // Bytes compared, so NaNs compare equal to themselves.
  if (!again.ok() || again->shape != a->shape ||
      (a->data.size() > 0 &&
       std::memcmp(again->data.data(), a->data.data(),
                   a->data.size() * sizeof(float)) != 0)) {
    std::fprintf(stderr, "the array's own .npy does not read back\n");
    std::abort();
  }
  return 0;
}
