// libFuzzer target: what an agent agrees to compile (kernel_policy/). The
// input, cut at its first NUL byte, is a kernel source (first part) and a
// compiler log (the rest). The source check, the build options check (of
// the source's first line) and the log scrub must not crash, leak or hit
// undefined behaviour, and a scrubbed log must be printable ASCII lines
// (tabs allowed): nothing in it can move a terminal's cursor.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernel_policy/build_options.h"
#include "kernel_policy/compiler_log.h"
#include "kernel_policy/source_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunefleet::kernel_policy;  // NOLINT: brevity
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string source = input.substr(0, cut);
  const std::string log = cut == std::string::npos ? "" : input.substr(cut + 1);
  (void)CheckKernelSource(source);
  (void)CheckKernelSource(input);
  const std::string options = source.substr(0, source.find('\n'));
  (void)CheckBuildOptions(options);
  const std::string scrubbed = ScrubCompilerLog(log, source, options, 4096);
  for (const char c : scrubbed) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u >= 0x7f) {
      std::fprintf(stderr, "scrubbed log holds byte 0x%02x\n", u);
      std::abort();
    }
  }
  return 0;
}
