// libFuzzer target: recorded tables (search_space/table.h): tunefleet CSV and
// JSON, Kernel Tuner cache files and CLBlast tuner output (the format is
// detected from the text). A table that parses is used as simulation uses
// it (its search space, the rows by index) and written back as CSV, which
// must parse again. Nothing may crash, leak or hit undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "search_space/table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunefleet::search_space::Table> table =
      tunefleet::search_space::ParseTable(text, "fuzz");
  if (!table.ok()) return 0;
  std::unique_ptr<tunefleet::search_space::SearchSpace> space =
      table->MakeSpace();
  const auto rows = table->RowsByIndex();
  for (uint64_t index : space->valid_indices()) {
    if (rows.find(index) == rows.end()) {
      std::fprintf(stderr, "valid index %llu has no row\n",
                   static_cast<unsigned long long>(index));
      std::abort();
    }
    (void)space->ConfigString(index);
    (void)space->Neighbours(index);
    break;  // one is enough to exercise them
  }
  const std::string csv = tunefleet::search_space::TableToCsv(*table);
  absl::StatusOr<tunefleet::search_space::Table> again =
      tunefleet::search_space::ParseTable(csv, "fuzz.csv");
  if (!again.ok()) {
    std::fprintf(stderr, "the table's own CSV does not parse: %s\n%s\n",
                 std::string(again.status().message()).c_str(), csv.c_str());
    std::abort();
  }
  return 0;
}
