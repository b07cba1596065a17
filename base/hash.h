// Hashes: SHA-256 (FIPS 180-4, through OpenSSL's one-shot EVP_Digest) for
// the server's token digests and the agent's program-binary cache keys,
// and 64-bit FNV-1a (Fowler, Noll, Vo) for short stable identifiers of
// workloads and template sources.
#ifndef TUNEFLEET_BASE_HASH_H_
#define TUNEFLEET_BASE_HASH_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tunefleet::base {

inline constexpr size_t kSha256Bytes = 32;

// The 32-byte digest of `data` (raw bytes, not hex). Thread-safe.
std::string Sha256(absl::string_view data);

// 64-bit FNV-1a of `bytes` as 16 lowercase hex digits; stable across builds
// and machines.
std::string Fnv1aHex(absl::string_view bytes);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_HASH_H_
