// Pieces every template of an op with a dtype and a fused epilogue shares:
// the OpenCL preamble (dtype.cl, epilogue.cl), the defines that select
// them, and the epilogue's buffers and arguments. See common/epilogue.cl
// for the epilogue's semantics.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_
#define TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"

namespace tunefleet::templates {

// dtype.cl followed by epilogue.cl: prepend to a template's own source.
std::string KernelPreamble();

// The epilogue of a workload (attrs "affine" and "act"), with the
// activation's parameters at their usual values: clip 0..6 (relu6),
// hardsigmoid 0.2, 0.5 (ONNX's default), hardswish 1/6, 0.5.
struct Epilogue {
  int affine = 0;  // AFFINE of epilogue.cl
  int act = 0;     // ACT of epilogue.cl
  float act_a = 0;
  float act_b = 0;
};
Epilogue EpilogueOf(const Workload& workload);

// " -DDTYPE_FP16=<0|1> -DAFFINE=<a> -DACT=<b>" for the workload.
std::string PreambleDefines(const Workload& workload);

// Appends the epilogue's buffers ("scale" and "shift", `channels` floats
// each, always present so kernel signatures stay fixed) to `buffers`.
void AddEpilogueBuffers(int64_t channels, std::vector<BufferDesc>* buffers);

// Appends the epilogue's arguments: scale, shift, act_a, act_b.
void AddEpilogueArgs(const Workload& workload, std::vector<ArgDesc>* args);

// Verification tolerance of a dtype: 1e-4 for fp32, 1e-2 for fp16 (half
// keeps 11 significant bits).
double ToleranceFor(const Workload& workload);

// Bytes per element of a workload's dtype.
int ElementBytes(const Workload& workload);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_
