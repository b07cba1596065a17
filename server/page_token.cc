#include "server/page_token.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tunefleet::server {

std::string MakePageToken(absl::string_view list, int64_t position) {
  return absl::WebSafeBase64Escape(absl::StrCat(list, ":", position));
}

absl::StatusOr<int64_t> ParsePageToken(absl::string_view token,
                                       absl::string_view list) {
  if (token.empty()) return 0;
  std::string text;
  const bool decoded = absl::WebSafeBase64Unescape(token, &text);
  absl::string_view rest = text;
  int64_t position = -1;
  if (!decoded || !absl::ConsumePrefix(&rest, list) ||
      !absl::ConsumePrefix(&rest, ":") || !absl::SimpleAtoi(rest, &position) ||
      position < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "page_token: '", token,
        "' is not a next_page_token of this list; send the previous "
        "response's next_page_token unchanged, or none for the first page"));
  }
  return position;
}

}  // namespace tunefleet::server
