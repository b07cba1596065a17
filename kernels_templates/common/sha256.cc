#include "kernels_templates/common/sha256.h"

#include <openssl/evp.h>

namespace tunefleet::templates {

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

}  // namespace tunefleet::templates
