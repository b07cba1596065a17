// Pieces the built-in templates share: the OpenCL preamble (dtype.cl,
// epilogue.cl, vector.cl), the defines that select them, the epilogue's
// buffers and arguments (see common/epilogue.cl for its semantics), and the
// checks and cost-model features of a launch against a device's limits.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_
#define TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"

namespace tunefleet::templates {

// dtype.cl followed by epilogue.cl: prepend to a template's own source.
std::string KernelPreamble();

// KernelPreamble() followed by vector.cl (floatv and its loads and stores,
// by the VW define): prepend to the source of a kernel with a VW knob.
std::string VectorKernelPreamble();

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

// Bytes per element of a workload's dtype.
int ElementBytes(const Workload& workload);

// a / b rounded up, for a >= 0 and b >= 1: work-groups that cover `a`
// elements with tiles of `b`.
int64_t CeilDiv(int64_t a, int64_t b);

// Smallest power of two >= n (1 for n <= 1).
int64_t NextPow2(int64_t n);

// OK when every buffer of tmpl.Buffers(workload) fits the device's max
// allocation (limits.max_mem_alloc_bytes; 0 means no limit), at 2 bytes an
// element for fp16 buffers and 4 for fp32 ones. Errors: INVALID_ARGUMENT
// "buffer <name> of <workload> needs <n> bytes, over the device's max
// allocation of <max>" for the first buffer that does not fit.
absl::Status CheckBuffersFit(const KernelTemplate& tmpl,
                             const Workload& workload,
                             const DeviceLimits& limits);

// OK when `config` has one value per knob of `tmpl`. Errors:
// INVALID_ARGUMENT "config has <n> values, template has <m> knobs".
absl::Status CheckConfigSize(const KernelTemplate& tmpl,
                             const KnobValues& config);

// OK when `why` is null; else INVALID_ARGUMENT "<config as text>: <why>",
// the error of a config that violates the constraint `why` names.
absl::Status ConfigStatus(const KernelTemplate& tmpl, const KnobValues& config,
                          const char* why);

// What one work-group of a config asks of a device, and how CheckWorkGroup
// names what it exceeds.
struct WorkGroupUse {
  // Work-items per NDRange dimension (the local work size, 1 to 3 values);
  // their product is the work-group size.
  std::vector<int64_t> local;
  // Static __local memory the kernel declares, in bytes.
  uint64_t local_mem_bytes = 0;
  // The reasons reported when the work-group size or the local memory
  // exceeds the device's.
  const char* size_reason = "work-group size exceeds the device's maximum";
  const char* local_mem_reason =
      "local memory tile exceeds the device's local memory";
};

// OK when the work-group fits the device: its size within
// limits.max_work_group_size, each local[d] within max_work_item_sizes[d],
// its local memory within limits.local_mem_bytes. Errors (checked in that
// order): ConfigStatus's INVALID_ARGUMENT with use.size_reason, "work-group
// dimension exceeds the device's work-item sizes" or use.local_mem_reason.
absl::Status CheckWorkGroup(const KernelTemplate& tmpl,
                            const KnobValues& config, const WorkGroupUse& use,
                            const DeviceLimits& limits);

// The launch of a config as LaunchFeatures sees it.
struct LaunchShape {
  double work_group_size = 1;  // work-items per work-group
  double work_groups = 1;      // work-groups in the NDRange
  double local_mem_bytes = 0;  // static __local bytes per work-group
};

// The derived features of a launch that every built-in template reports,
// around the template's own ones, in this order (a feature's position in
// DerivedFeatures is part of the cost model's input):
//   log2_work_group_size, log2_work_groups, log2_work_items (all of the
//   NDRange), `per_item` (what one work-item computes),
//   log2_local_mem_bytes (log2 of 1 + bytes), local_mem_fraction (of the
//   device's local memory; 0 when it is unknown), `own...`,
//   groups_per_compute_unit (compute units read as at least 1),
//   wave_efficiency (the fraction of the last wave of work-groups that has
//   work: 1 when the groups fill every compute unit in every wave),
//   `tail...`.
std::vector<Feature> LaunchFeatures(const LaunchShape& launch,
                                    const DeviceLimits& limits,
                                    Feature per_item, std::vector<Feature> own,
                                    std::vector<Feature> tail);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_COMMON_TEMPLATE_SUPPORT_H_
