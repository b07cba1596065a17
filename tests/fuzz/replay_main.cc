// A main() for the fuzz targets in builds without libFuzzer (the g++
// build): runs LLVMFuzzerTestOneInput once on every file named or found
// under the directories named, as `target -runs=0 DIR...` does with
// libFuzzer. Keeps the targets compiling and their seeds and crash
// reproducers passing in every build; finding new inputs needs
// deploy/fuzz.sh.
//
//   validation_fuzzer_replay DIR_OR_FILE...
// Exits 0 after the last input; 1 when there was none, 2 when an argument
// is neither a file nor a directory; a crashing input ends the process as
// the crash does.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// Optional in a target, as with libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                          char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> Inputs(int argc, char** argv, bool* ok) {
  std::vector<std::filesystem::path> out;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_regular_file(arg)) {
      out.push_back(arg);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
        if (e.is_regular_file()) out.push_back(e.path());
      }
    } else {
      std::fprintf(stderr, "%s: not a file or directory\n", argv[i]);
      *ok = false;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = true;
  const std::vector<std::filesystem::path> inputs = Inputs(argc, argv, &ok);
  if (!ok) return 2;
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs found\n");
    return 1;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  for (const std::filesystem::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
