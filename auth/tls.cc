#include "auth/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/host_port.h"
#include "base/openssl.h"
#include "base/status_macros.h"

namespace tunefleet::auth {
namespace {

using base::BioPtr;
using base::MemoryBio;
using base::PkeyPtr;
using base::X509Ptr;

// Loads one PEM certificate (the first of the file).
absl::StatusOr<X509Ptr> ParseCertificate(const std::string& pem,
                                         const std::string& path) {
  BioPtr bio = MemoryBio(pem);
  if (bio == nullptr) return absl::InternalError("BIO_new_mem_buf failed");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds no PEM certificate"));
  }
  return cert;
}

// OK when `key_pem` holds a PEM private key that matches the first
// certificate in `cert_pem` (files named by `tls`). Errors:
// INVALID_ARGUMENT naming the file.
absl::Status CheckKeyMatchesCertificate(const TlsServerFiles& tls,
                                        const std::string& cert_pem,
                                        const std::string& key_pem) {
  TUNEFLEET_ASSIGN_OR_RETURN(X509Ptr cert,
                             ParseCertificate(cert_pem, tls.cert_file));
  BioPtr bio = MemoryBio(key_pem);
  if (bio == nullptr) return absl::InternalError("BIO_new_mem_buf failed");
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        tls.key_file, " holds no PEM private key (or it is encrypted)"));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the key in ", tls.key_file,
                     " does not match the certificate in ", tls.cert_file));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsServerFiles& tls) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!tls.enabled()) {
    if (!tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--client-ca needs TLS: pass --tls-cert and --tls-key too");
    }
    return grpc::InsecureServerCredentials();
  }
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::string cert_pem,
      base::ReadWholeFile(tls.cert_file, "TLS certificate"));
  TUNEFLEET_ASSIGN_OR_RETURN(std::string key_pem,
                             base::ReadWholeFile(tls.key_file, "TLS key"));
  TUNEFLEET_RETURN_IF_ERROR(CheckKeyMatchesCertificate(tls, cert_pem, key_pem));
  grpc::SslServerCredentialsOptions ssl(
      tls.client_ca_file.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!tls.client_ca_file.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        ssl.pem_root_certs,
        base::ReadWholeFile(tls.client_ca_file, "client CA"));
    TUNEFLEET_RETURN_IF_ERROR(
        ParseCertificate(ssl.pem_root_certs, tls.client_ca_file).status());
  }
  ssl.pem_key_cert_pairs.push_back({std::move(key_pem), std::move(cert_pem)});
  return grpc::SslServerCredentials(ssl);
}

bool IsLoopbackAddress(absl::string_view listen) {
  if (absl::StartsWith(listen, "unix:") ||
      absl::StartsWith(listen, "unix-abstract:")) {
    return true;
  }
  for (absl::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (absl::ConsumePrefix(&listen, scheme)) break;
  }
  const size_t colon = listen.rfind(':');
  absl::string_view host =
      colon == absl::string_view::npos ? listen : listen.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  return base::IsLoopbackHost(host);
}

}  // namespace tunefleet::auth
