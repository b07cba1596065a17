// Cutting table cells to fit a terminal (cli/table_text.h): the cut mark,
// UTF-8 characters kept whole, the widest column narrowed first, headers
// and kMinCutWidth kept, and nothing cut without a width.
#include "cli/table_text.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace tunefleet::cli {
namespace {

std::vector<std::string> TableLines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(CutText, KeepsShortTextAndMarksTheCut) {
  EXPECT_EQ(CutText("gemm M=8", 8), "gemm M=8");
  EXPECT_EQ(CutText("gemm M=8", 20), "gemm M=8");
  EXPECT_EQ(CutText("gemm M=8 N=8", 8), "gemm M=…");
  EXPECT_EQ(TextWidth(CutText("gemm M=8 N=8", 8)), 8u);
  EXPECT_EQ(CutText("gemm", 1), "…");
  EXPECT_EQ(CutText("gemm", 0), "");
}

TEST(CutText, NeverSplitsAUtf8Character) {
  // "ä" is two bytes: the cut falls after it, not inside it.
  EXPECT_EQ(CutText("Gerät-key", 6), "Gerät…");
  EXPECT_EQ(TextWidth("Gerät…"), 6u);
}

TEST(FitTable, NarrowsTheWidestCutColumnFirst) {
  const std::string long_a(40, 'a');
  const std::string long_b(20, 'b');
  // Natural line: 1 + 2 + 40 + 2 + 20 = 65 characters.
  const std::string table =
      FitTable({"N", "A", "B"}, {{"1", long_a, long_b}}, {true},
               /*cut_columns=*/{1, 2}, /*max_width=*/60);
  const std::vector<std::string> lines = TableLines(table);
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& line : lines) EXPECT_LE(TextWidth(line), 60u);
  // The 5 characters come from A (40 -> 35); B is narrower and stays whole.
  EXPECT_EQ(lines[1], "1  " + std::string(34, 'a') + "…  " + long_b);
  // Two wide columns give in turn: 1 + 2 + 30 + 2 + 30 = 65 -> 28 and 27.
  const std::vector<std::string> even = TableLines(FitTable(
      {"N", "A", "B"}, {{"1", std::string(30, 'a'), std::string(30, 'b')}}, {},
      {1, 2}, 60));
  ASSERT_EQ(even.size(), 2u);
  EXPECT_EQ(even[1],
            "1  " + std::string(26, 'a') + "…  " + std::string(27, 'b') + "…");
}

TEST(FitTable, StopsAtTheFloorAndKeepsOtherColumnsWhole) {
  const std::string long_a(40, 'a');
  const std::string table =
      FitTable({"N", "A", "KEEP"}, {{"1", long_a, std::string(50, 'k')}}, {},
               /*cut_columns=*/{1}, 30);
  const std::vector<std::string> lines = TableLines(table);
  ASSERT_EQ(lines.size(), 2u);
  // A stops at kMinCutWidth; KEEP is never cut, so the line stays longer.
  EXPECT_EQ(lines[1], "1  " + std::string(kMinCutWidth - 1, 'a') + "…  " +
                          std::string(50, 'k'));
}

TEST(FitTable, NoWidthOrAFittingTableCutsNothing) {
  const std::vector<std::vector<std::string>> rows = {
      {"1", std::string(100, 'w')}};
  for (const size_t width : {size_t{0}, size_t{200}}) {
    const std::vector<std::string> lines =
        TableLines(FitTable({"N", "W"}, rows, {}, {1}, width));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[1], "1  " + std::string(100, 'w')) << width;
  }
}

TEST(TableWidth, UsesColumnsWhenStdoutIsNotATerminal) {
  if (isatty(STDOUT_FILENO)) GTEST_SKIP() << "stdout is a terminal";
  setenv("COLUMNS", "93", 1);
  EXPECT_EQ(TableWidth(), 93u);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(TableWidth(), kDefaultTableWidth);
  unsetenv("COLUMNS");
  EXPECT_EQ(TableWidth(), kDefaultTableWidth);
}

}  // namespace
}  // namespace tunefleet::cli
