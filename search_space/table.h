// Recorded tables: a fully measured search space (every config with its time)
// that stands in for a device in simulation (docs/ARCHITECTURE.md, Search and
// cost model). Four formats are read:
//  - tunefleet CSV: '# key: value' metadata lines, a header of knob columns
//    plus `time_ms` (or `time`) and optionally `error`; a row whose error is
//    not OK, or whose time is empty or "inf", is a failed config;
//  - tunefleet JSON: {"knobs": [...], "results": [{"config": {...},
//    "time_ms": t, "error": "OK"}], "metadata": {...}};
//  - Kernel Tuner cache files: "tune_params_keys" and a "cache" of entries
//    with the parameters and "time" in ms (a string time or one >= 1e20
//    marks a failed config);
//  - CLBlast tuner output (clblast_tuner_*): "results": [{"time": ms,
//    "parameters": {...}}].
// Knob columns of integers keep their values; other columns become
// categorical knobs valued 0..n-1 in sorted label order.
#ifndef TUNEFLEET_SEARCH_SPACE_TABLE_H_
#define TUNEFLEET_SEARCH_SPACE_TABLE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "search_space/space.h"

namespace tunefleet::search_space {

struct Table {
  // One measured config: value positions per knob, and its time.
  struct Row {
    std::vector<uint32_t> digits;
    double time_ms = 0;
    bool ok = false;
  };
  std::string format;  // "csv", "json", "kernel_tuner" or "clblast"
  std::vector<KnobSpec> knobs;
  // Per knob: the original labels of a categorical knob, else empty.
  std::vector<std::vector<std::string>> labels;
  std::vector<Row> rows;  // one per distinct config (the fastest kept)
  std::map<std::string, std::string> metadata;
  double best_time_ms = 0;  // fastest successful row

  // The table as a search space: its configs are the valid ones.
  std::unique_ptr<SearchSpace> MakeSpace() const;
  // The row of each config index of MakeSpace().
  absl::flat_hash_map<uint64_t, const Row*> RowsByIndex() const;
};

// Largest table text read (after decompression) and deepest JSON nesting.
inline constexpr size_t kMaxTableBytes = size_t{256} << 20;
inline constexpr int kMaxTableJsonDepth = 64;

// Reads and parses a table file (plain or gzip-compressed), detecting its
// format. Errors:
// NOT_FOUND for a missing file; INVALID_ARGUMENT naming the file and what is
// wrong (empty, no time column, a non-numeric time with its line, no
// successful config, unrecognised JSON, too many knob combinations, over
// kMaxTableBytes or nested deeper than kMaxTableJsonDepth, no knob, a knob
// named twice).
absl::StatusOr<Table> LoadTable(const std::string& path);

// Parses table text; `name` is used in error messages.
absl::StatusOr<Table> ParseTable(absl::string_view text,
                                 absl::string_view name);

// Writes a table in tunefleet CSV form (metadata, header, rows).
std::string TableToCsv(const Table& table);

}  // namespace tunefleet::search_space

#endif  // TUNEFLEET_SEARCH_SPACE_TABLE_H_
