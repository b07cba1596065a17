#include "cli/table_text.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/printable.h"
#include "cli/common.h"

namespace tunefleet::cli {
namespace {

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

}  // namespace

size_t TextWidth(absl::string_view text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return !IsContinuationByte(c); }));
}

std::string CutText(absl::string_view text, size_t width) {
  if (TextWidth(text) <= width) return std::string(text);
  if (width == 0) return "";
  // The byte where character width - 1 starts.
  size_t kept = 0;
  size_t end = 0;
  for (; end < text.size(); ++end) {
    if (!IsContinuationByte(text[end])) {
      if (kept == width - 1) break;
      ++kept;
    }
  }
  return absl::StrCat(text.substr(0, end), kCutMark);
}

std::string FitTable(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& raw_rows,
                     const std::vector<bool>& right_aligned,
                     const std::vector<size_t>& cut_columns, size_t max_width) {
  if (max_width == 0 || header.empty()) {
    return FormatTable(header, raw_rows, right_aligned);
  }
  // Escaped before they are measured (FormatTable escapes them too).
  std::vector<std::vector<std::string>> rows = raw_rows;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = base::EscapeUnprintable(cell);
  }
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = TextWidth(header[i]);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], TextWidth(row[i]));
    }
  }
  size_t line = 2 * (width.size() - 1);
  for (const size_t w : width) line += w;
  // Narrow the widest column that may still give a character.
  while (line > max_width) {
    size_t widest = width.size();
    for (const size_t c : cut_columns) {
      if (c >= width.size()) continue;
      const size_t floor = std::max(kMinCutWidth, TextWidth(header[c]));
      if (width[c] > floor &&
          (widest == width.size() || width[c] > width[widest])) {
        widest = c;
      }
    }
    if (widest == width.size()) break;
    --width[widest];
    --line;
  }
  std::vector<std::vector<std::string>> cut = rows;
  for (auto& row : cut) {
    for (const size_t c : cut_columns) {
      if (c < row.size() && c < width.size())
        row[c] = CutText(row[c], width[c]);
    }
  }
  return FormatTable(header, cut, right_aligned);
}

size_t TableWidth() {
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col > 0) {
    return size.ws_col;
  }
  const char* columns = std::getenv("COLUMNS");
  int n = 0;
  if (columns != nullptr && absl::SimpleAtoi(columns, &n) && n > 0) {
    return static_cast<size_t>(n);
  }
  return kDefaultTableWidth;
}

}  // namespace tunefleet::cli
