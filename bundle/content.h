// The content of a record bundle (docs/BUNDLES.md, "content"): the rows of
// store/exchange.h as one JSON object, written with nlohmann-json and read
// back with every field checked.
#ifndef TUNEFLEET_BUNDLE_CONTENT_H_
#define TUNEFLEET_BUNDLE_CONTENT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/exchange.h"

namespace tunefleet::bundle {

// The content format's version ("format_version"); a reader refuses a
// newer one.
inline constexpr int kContentVersion = 1;

// What a bundle's content says besides its rows.
struct ContentInfo {
  int64_t created_unix_ms = 0;    // when it was exported
  std::string tunefleet_version;  // of the exporter
  store::ExchangeFilter filter;   // what was exported
};

// `rows` as content text (compact JSON, UTF-8; strings that are not UTF-8
// are written with U+FFFD in place of bad bytes).
std::string EncodeContent(const store::ExchangeRows& rows,
                          const ContentInfo& info);

struct DecodedContent {
  ContentInfo info;
  store::ExchangeRows rows;
};

// Reads content text. Errors: INVALID_ARGUMENT naming what is wrong (not
// JSON, too deep, not the content format, a newer format_version, a
// missing field or one of the wrong type, with its path: "trials[3].config").
absl::StatusOr<DecodedContent> DecodeContent(absl::string_view text);

}  // namespace tunefleet::bundle

#endif  // TUNEFLEET_BUNDLE_CONTENT_H_
