// Tables that fit a terminal: long cells of chosen columns (workloads,
// device keys, configs) cut with "…" so that every row stays on one line;
// `tunefleet query` and `tunefleet jobs` print them, and --wide prints the
// cells in full.
#ifndef TUNEFLEET_CLI_TABLE_TEXT_H_
#define TUNEFLEET_CLI_TABLE_TEXT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet::cli {

// What marks a cut cell: one character (three bytes of UTF-8).
inline constexpr absl::string_view kCutMark = "…";
// No column is cut below this many characters (nor below its header).
inline constexpr size_t kMinCutWidth = 16;
// The width TableWidth() assumes when it cannot ask a terminal.
inline constexpr size_t kDefaultTableWidth = 120;

// Characters of UTF-8 `text` (continuation bytes not counted), as
// FormatTable (cli/common.h) measures cells.
size_t TextWidth(absl::string_view text);

// `text` when it has at most `width` characters; else its first width - 1
// characters and kCutMark (width characters in all; kCutMark alone for
// width 1, "" for 0). Never splits a UTF-8 character.
std::string CutText(absl::string_view text, size_t width);

// FormatTable's table (columns two spaces apart, `right_aligned` as there)
// with the cells of the `cut_columns` (indexes) cut by CutText so that each
// line has at most `max_width` characters: the widest of those columns is
// narrowed first, one character at a time, none below kMinCutWidth or its
// header's width (lines may then stay longer). max_width 0: nothing is cut.
std::string FitTable(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows,
                     const std::vector<bool>& right_aligned,
                     const std::vector<size_t>& cut_columns, size_t max_width);

// The characters a table line may have on standard output: the terminal's
// columns when stdout is a terminal (TIOCGWINSZ), else $COLUMNS when it is
// a number > 0, else kDefaultTableWidth.
size_t TableWidth();

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_TABLE_TEXT_H_
