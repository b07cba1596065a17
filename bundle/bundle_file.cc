#include "bundle/bundle_file.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/hash.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "base/version.h"

namespace tunefleet::bundle {
namespace {

constexpr absl::string_view kMagic = "tunefleet-bundle";

// The header lines the signature covers: version, size, digest.
std::string SignedHeader(uint64_t size, absl::string_view sha256_hex) {
  return absl::StrCat(kMagic, " ", kFileVersion, "\ncontent-bytes ", size,
                      "\ncontent-sha256 ", sha256_hex, "\n");
}

bool IsLowerHex(absl::string_view s, size_t size) {
  if (s.size() != size) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The next line of `rest` (without its '\n'); false when there is no '\n'.
bool NextLine(absl::string_view& rest, absl::string_view* line) {
  const size_t end = rest.find('\n');
  if (end == absl::string_view::npos) return false;
  *line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  return true;
}

absl::Status NotABundle(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("not a tunefleet record bundle: ", why));
}

}  // namespace

absl::StatusOr<std::string> EncodeFile(const std::string& content,
                                       const SigningKey* key) {
  const std::string digest = absl::BytesToHexString(base::Sha256(content));
  std::string out = SignedHeader(content.size(), digest);
  if (key != nullptr) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::string signature,
                               key->Sign(SignedHeader(content.size(), digest)));
    absl::StrAppend(&out, "signature ed25519 ",
                    absl::BytesToHexString(key->public_key()), " ",
                    absl::BytesToHexString(signature), "\n");
  }
  absl::StrAppend(&out, "\n", content);
  return out;
}

absl::StatusOr<VerifiedFile> VerifyFile(absl::string_view bytes,
                                        const TrustedKeys* trust) {
  absl::string_view rest = bytes;
  absl::string_view line;
  if (!NextLine(rest, &line)) return NotABundle("no header line");
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  if (words.size() != 2 || words[0] != kMagic) {
    return NotABundle("the first line is not \"tunefleet-bundle VERSION\"");
  }
  int version = 0;
  if (!absl::SimpleAtoi(words[1], &version) || version != kFileVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("record bundle format version ", words[1], " is not ",
                     kFileVersion, ", the one this tunefleet reads"));
  }
  uint64_t size = 0;
  if (!NextLine(rest, &line) || !absl::ConsumePrefix(&line, "content-bytes ") ||
      !absl::SimpleAtoi(line, &size)) {
    return NotABundle("line 2 is not \"content-bytes N\"");
  }
  absl::string_view digest;
  if (!NextLine(rest, &line) ||
      !absl::ConsumePrefix(&line, "content-sha256 ") || !IsLowerHex(line, 64)) {
    return NotABundle("line 3 is not \"content-sha256 <64 hex digits>\"");
  }
  digest = line;
  VerifiedFile out;
  std::string signer, signature;
  if (!NextLine(rest, &line)) return NotABundle("the header does not end");
  if (absl::ConsumePrefix(&line, "signature ")) {
    std::vector<absl::string_view> sig = absl::StrSplit(line, ' ');
    if (sig.size() != 3 || sig[0] != "ed25519" ||
        !IsLowerHex(sig[1], 2 * kPublicKeyBytes) ||
        !IsLowerHex(sig[2], 2 * kSignatureBytes)) {
      return NotABundle(
          "line 4 is not \"signature ed25519 <public key hex> <signature "
          "hex>\"");
    }
    signer = absl::HexStringToBytes(sig[1]);
    signature = absl::HexStringToBytes(sig[2]);
    out.signer_key_hex = std::string(sig[1]);
    if (!NextLine(rest, &line)) return NotABundle("the header does not end");
  }
  if (!line.empty())
    return NotABundle("the header does not end in a blank line");
  if (rest.size() != size) {
    return absl::DataLossError(
        absl::StrCat("record bundle truncated or padded: the header says ",
                     size, " content bytes, the file has ", rest.size()));
  }
  const std::string actual = absl::BytesToHexString(base::Sha256(rest));
  if (actual != digest) {
    return absl::DataLossError(absl::StrCat(
        "record bundle content SHA-256 mismatch: the header says ", digest,
        ", the content hashes to ", actual, " (the file was altered)"));
  }
  if (!signer.empty() &&
      !VerifySignature(signer, SignedHeader(size, digest), signature)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "record bundle signature does not verify under the key it names (",
        out.signer_key_hex, "): the header was altered"));
  }
  if (trust != nullptr) {
    if (signer.empty()) {
      return absl::PermissionDeniedError(
          "record bundle is unsigned, and only bundles signed by a trusted "
          "key are accepted (sign it with `records export --sign KEY.pem`)");
    }
    if (!trust->Contains(signer)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "record bundle signed by an untrusted key: ", out.signer_key_hex,
          " is not among the ", trust->size(), " trusted public keys"));
    }
  }
  out.content = std::string(rest);
  out.sha256_hex = actual;
  return out;
}

absl::StatusOr<std::string> ExportBundle(store::Store& store,
                                         const store::ExchangeFilter& filter,
                                         const SigningKey* key) {
  TUNEFLEET_ASSIGN_OR_RETURN(store::ExchangeRows rows,
                             store.ExportRows(filter));
  if (rows.jobs.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no tuning records to export (device key '", filter.device_key,
        "', op '", filter.op, "'; empty: any)"));
  }
  ContentInfo info;
  info.created_unix_ms = base::NowMs();
  info.tunefleet_version = base::kVersion;
  info.filter = filter;
  return EncodeFile(EncodeContent(rows, info), key);
}

absl::StatusOr<ImportResult> ImportBundle(store::Store& store,
                                          absl::string_view bytes,
                                          const TrustedKeys* trust) {
  TUNEFLEET_ASSIGN_OR_RETURN(VerifiedFile file, VerifyFile(bytes, trust));
  TUNEFLEET_ASSIGN_OR_RETURN(DecodedContent content,
                             DecodeContent(file.content));
  ImportResult result;
  result.sha256_hex = file.sha256_hex;
  result.signer_key_hex = file.signer_key_hex;
  result.trials_in_bundle = static_cast<int64_t>(content.rows.trials.size());
  TUNEFLEET_ASSIGN_OR_RETURN(result.merged, store.MergeRows(content.rows));
  return result;
}

}  // namespace tunefleet::bundle
