// libFuzzer target: record bundles (bundle/, docs/BUNDLES.md), the files
// `tunefleet records import` and the ImportRecords RPC read from another
// site (issue 39). The input is tried twice:
// 1. as a bundle file: VerifyFile (header, size, SHA-256, signature), then
//    DecodeContent of what it verified;
// 2. as content text: DecodeContent directly (mutations would rarely get
//    past the file's SHA-256 otherwise).
// Content that decodes has one canonical form: encoded, decoded and
// encoded again it is the same text, and wrapped as a file it verifies
// and gives that text back. Nothing may crash, leak or hit undefined
// behaviour.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bundle/bundle_file.h"
#include "bundle/content.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "bundle_fuzzer: %s\n", what);
  std::abort();
}

void CheckContent(absl::string_view text) {
  using namespace tunefleet::bundle;  // NOLINT: a fuzz target's brevity
  absl::StatusOr<DecodedContent> decoded = DecodeContent(text);
  if (!decoded.ok()) return;
  const std::string first = EncodeContent(decoded->rows, decoded->info);
  absl::StatusOr<DecodedContent> again = DecodeContent(first);
  if (!again.ok()) Fail("encoded content does not decode");
  if (EncodeContent(again->rows, again->info) != first) {
    Fail("content's encoding is not stable across a decode");
  }
  absl::StatusOr<std::string> file = EncodeFile(first, nullptr);
  if (!file.ok()) Fail("EncodeFile failed without a key");
  absl::StatusOr<VerifiedFile> verified = VerifyFile(*file, nullptr);
  if (!verified.ok() || verified->content != first) {
    Fail("an encoded file does not verify to its content");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunefleet::bundle::VerifiedFile> file =
      tunefleet::bundle::VerifyFile(bytes, nullptr);
  if (file.ok()) CheckContent(file->content);
  CheckContent(bytes);
  return 0;
}
