// A record bundle file (docs/BUNDLES.md): a short text header -- format
// version, content size, the content's SHA-256 and, optionally, an Ed25519
// signature -- then the content (bundle/content.h). Export writes one from
// a database; import verifies it completely before it writes anything, then
// merges it in one transaction (store::Store::MergeRows).
#ifndef TUNEFLEET_BUNDLE_BUNDLE_FILE_H_
#define TUNEFLEET_BUNDLE_BUNDLE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bundle/content.h"
#include "bundle/keys.h"
#include "store/exchange.h"
#include "store/store.h"

namespace tunefleet::bundle {

// The file format's version (the header's first line, "tunefleet-bundle
// 1"); a reader refuses another.
inline constexpr int kFileVersion = 1;
// The largest bundle read or accepted over gRPC: 1 GiB.
inline constexpr int64_t kMaxBundleBytes = int64_t{1} << 30;

// The bundle file of `content`, signed with `key` when it is not null.
// Errors: the key's (INTERNAL).
absl::StatusOr<std::string> EncodeFile(const std::string& content,
                                       const SigningKey* key);

// A bundle whose header, digest and signature were verified.
struct VerifiedFile {
  std::string content;         // the content bytes
  std::string sha256_hex;      // their SHA-256, 64 hex digits
  std::string signer_key_hex;  // the signer's raw public key; "" unsigned
};

// Checks `bytes` as a bundle file, in this order: the header's form and
// version (INVALID_ARGUMENT "not a tunefleet record bundle" / "format
// version N"), the content's size (DATA_LOSS "truncated": fewer bytes than
// the header says, or more), its SHA-256 (DATA_LOSS "content SHA-256
// mismatch"), the signature when present (PERMISSION_DENIED "signature does
// not verify"), and, when `trust` is not null, that it is signed by one of
// the trusted keys (PERMISSION_DENIED "unsigned" / "untrusted key").
absl::StatusOr<VerifiedFile> VerifyFile(absl::string_view bytes,
                                        const TrustedKeys* trust);

// What `records export` does: the rows `filter` selects from `store` as a
// bundle file, signed with `key` when not null. NOT_FOUND when no job
// matches.
absl::StatusOr<std::string> ExportBundle(store::Store& store,
                                         const store::ExchangeFilter& filter,
                                         const SigningKey* key);

// What an import did.
struct ImportResult {
  store::MergeSummary merged;
  std::string sha256_hex;
  std::string signer_key_hex;  // "" unsigned
  int64_t trials_in_bundle = 0;
};

// What `records import` does: VerifyFile(bytes, trust), DecodeContent,
// then store.MergeRows in one transaction. Any error leaves the database
// as it was.
absl::StatusOr<ImportResult> ImportBundle(store::Store& store,
                                          absl::string_view bytes,
                                          const TrustedKeys* trust);

}  // namespace tunefleet::bundle

#endif  // TUNEFLEET_BUNDLE_BUNDLE_FILE_H_
