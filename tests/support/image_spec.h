// The head of a GEMM spec template (TOML) whose B is read through an image
// when its knob IMG is 1: what the image tests of kernels_templates, trial
// and measure share. Each test appends its own [library], [kernel] and
// [reference] tables.
#ifndef TUNEFLEET_TESTS_SUPPORT_IMAGE_SPEC_H_
#define TUNEFLEET_TESTS_SUPPORT_IMAGE_SPEC_H_

#include <string>

#include "absl/strings/str_cat.h"

namespace tunefleet::testing {

// From a newline: name = `name`, op "gemm", flops 2*M*N*K, then the lines
// `after_flops` (e.g. a constraints line with its newline; "" for none);
// knob IMG in [0, 1]; buffers A (M x K; in the workload's dtype when
// `a_workload_dtype`), B (K x N, the workload's dtype) and C (M x N, the
// output); and the image b_image of B (K rows of N elements) when IMG is 1.
inline std::string GemmImageSpecHead(const std::string& name,
                                     const std::string& after_flops,
                                     bool a_workload_dtype) {
  return absl::StrCat("\nname = \"", name, "\"\n", R"spec(op = "gemm"
flops = "2 * M * N * K"
)spec",
                      after_flops, R"spec([knobs]
IMG = [0, 1]
[[buffers]]
name = "A"
elements = "M * K"
)spec",
                      a_workload_dtype ? "dtype = \"workload\"\n" : "",
                      R"spec([[buffers]]
name = "B"
elements = "K * N"
dtype = "workload"
[[buffers]]
name = "C"
elements = "M * N"
output = true
[[images]]
name = "b_image"
buffer = "B"
rows = "K"
row_elements = "N"
when = "IMG == 1"
)spec");
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_IMAGE_SPEC_H_
