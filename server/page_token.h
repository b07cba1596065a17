// Page tokens of the paginated TuningService calls (ListJobs, QueryRecords;
// proto/tunefleet/v1/tuning.proto): where the next page starts, opaque to
// clients. A token names its list, so one list's token given to another is
// refused. Follows the page_size/page_token/next_page_token pattern of
// Google's API design guide (AIP-158).
#ifndef TUNEFLEET_SERVER_PAGE_TOKEN_H_
#define TUNEFLEET_SERVER_PAGE_TOKEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::server {

// The token for a page of list `list` ("jobs", "records", "best") starting
// after `position` (a row id or an offset; >= 0).
std::string MakePageToken(absl::string_view list, int64_t position);

// The position in `token`; 0 for an empty token (the first page).
// INVALID_ARGUMENT ("page_token: ...") for a token this server did not
// issue for `list`.
absl::StatusOr<int64_t> ParsePageToken(absl::string_view token,
                                       absl::string_view list);

// The page size a request asks for: `requested`, or `fallback` for 0
// (unset).
inline int64_t PageSize(int64_t requested, int64_t fallback) {
  return requested == 0 ? fallback : requested;
}

// For a page read with one row more than `page_size` (that row tells
// whether a page follows): trims `rows` to the page and returns its last
// row, or returns nullptr (and leaves `rows`) when no page follows.
template <typename Row>
const Row* TrimToPage(std::vector<Row>& rows, int64_t page_size) {
  if (rows.size() <= static_cast<size_t>(page_size)) return nullptr;
  rows.resize(static_cast<size_t>(page_size));
  return &rows.back();
}

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_PAGE_TOKEN_H_
