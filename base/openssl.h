// Owners of OpenSSL objects (RAII): each frees its object with the
// matching OpenSSL *_free call, so every object a caller makes is
// released on every path. OpenSSL's types are only declared here; the
// callers include the OpenSSL headers of the calls they make.
#ifndef TUNEFLEET_BASE_OPENSSL_H_
#define TUNEFLEET_BASE_OPENSSL_H_

#include <memory>

#include "absl/strings/string_view.h"

typedef struct bio_st BIO;
typedef struct evp_md_ctx_st EVP_MD_CTX;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_st X509;

namespace tunefleet::base {

struct BioFree {
  void operator()(BIO* bio) const;
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const;
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const;
};
struct X509Free {
  void operator()(X509* x509) const;
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

// A read-only memory BIO over `text`, which must outlive it
// (BIO_new_mem_buf); null when OpenSSL cannot make one.
BioPtr MemoryBio(absl::string_view text);

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_OPENSSL_H_
