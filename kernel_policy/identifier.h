// Which characters make an identifier of OpenCL C (C99, section 6.4.2 of
// ISO/IEC 9899: a letter or underscore, then letters, digits and
// underscores), as the source check and the compiler-log reader scan for
// them. Internal to kernel_policy.
#ifndef TUNEFLEET_KERNEL_POLICY_IDENTIFIER_H_
#define TUNEFLEET_KERNEL_POLICY_IDENTIFIER_H_

#include "absl/strings/ascii.h"

namespace tunefleet::kernel_policy {

// Whether `c` may start an identifier.
inline bool IsIdentStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_';
}
// Whether `c` may continue an identifier.
inline bool IsIdentChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace tunefleet::kernel_policy

#endif  // TUNEFLEET_KERNEL_POLICY_IDENTIFIER_H_
