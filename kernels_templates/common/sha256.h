// SHA-256 (FIPS 180-4) through OpenSSL's one-shot EVP_Digest. It lives in
// kernels_templates/, the library every other part of tunefleet links, so
// that the server's token hashes and the agent's program-binary cache keys
// use one function.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_COMMON_SHA256_H_
#define TUNEFLEET_KERNELS_TEMPLATES_COMMON_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet::templates {

inline constexpr size_t kSha256Bytes = 32;

// The 32-byte digest of `data` (raw bytes, not hex). Thread-safe.
std::string Sha256(absl::string_view data);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_COMMON_SHA256_H_
