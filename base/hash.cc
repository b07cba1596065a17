#include "base/hash.h"

#include <openssl/evp.h>

#include <cstdint>
#include <cstdio>

namespace tunefleet::base {

std::string Sha256(absl::string_view data) {
  std::string digest(kSha256Bytes, '\0');
  unsigned int size = 0;
  // One-shot digest: no handle outlives the call. It fails only when
  // OpenSSL cannot allocate; the zero digest then matches nothing real.
  if (EVP_Digest(data.data(), data.size(),
                 reinterpret_cast<unsigned char*>(digest.data()), &size,
                 EVP_sha256(), nullptr) != 1 ||
      size != kSha256Bytes) {
    return std::string(kSha256Bytes, '\0');
  }
  return digest;
}

std::string Fnv1aHex(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV prime
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tunefleet::base
