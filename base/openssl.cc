#include "base/openssl.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

namespace tunefleet::base {

void BioFree::operator()(BIO* bio) const { BIO_free(bio); }
void MdCtxFree::operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
void PkeyFree::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
void X509Free::operator()(X509* x509) const { X509_free(x509); }

BioPtr MemoryBio(absl::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

}  // namespace tunefleet::base
