// Writes the synthetic models of synthetic_models.h as DIR/<name>.onnx and
// prints one line per model: the file, its inputs and outputs with shapes,
// and what it holds.
//   build/tests/support/write_synthetic_models DIR
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "tests/support/synthetic_models.h"

namespace {

std::string Shapes(const std::vector<tunefleet::testing::NamedShape>& v) {
  return absl::StrJoin(v, " ", [](std::string* out, const auto& named) {
    absl::StrAppend(out, named.first, "=", absl::StrJoin(named.second, ","));
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: write_synthetic_models DIR\n"
                 "Writes the synthetic ONNX models of the model tests "
                 "(tests/support/synthetic_models.h) as DIR/<name>.onnx.\n");
    return argc == 2 ? 0 : 2;
  }
  const std::string dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& m : tunefleet::testing::SyntheticModels()) {
    const std::string path = dir + "/" + m.name + ".onnx";
    if (absl::Status s = tunefleet::base::WriteFileAtomically(path, m.bytes);
        !s.ok()) {
      std::fprintf(stderr, "write_synthetic_models: %s\n",
                   std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s  in: %s  out: %s  (%s)\n", path.c_str(),
                Shapes(m.inputs).c_str(), Shapes(m.outputs).c_str(),
                m.forms.c_str());
  }
  return 0;
}
