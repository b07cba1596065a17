// The descriptor of global_pool.cl: global max or average pooling over
// NCHW tensors (op global_pool, dims N C H W, attr mode=max|avg), fp32 or
// fp16 storage; output N x C (x 1 x 1), the max or mean of each plane.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_POOL_GLOBAL_POOL_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_POOL_GLOBAL_POOL_TEMPLATE_H_

#include <string>
#include <vector>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Template "global_pool_reduce": WPC work-items per plane reduce strided
// shares of its H*W elements, then combine them by a tree reduction in
// local memory. Knobs, in order:
//   WPC     work-items per plane (dimension 0)   1, 2, 4, ..., 256
//   CPG     planes per work-group (dimension 1)  1, 2, 4, ..., 32
//   VW      elements per work-item per step      1, 2, 4, 8
//   UNROLL  steps per loop iteration             1, 2, 4
class GlobalPoolTemplate : public KernelTemplate {
 public:
  GlobalPoolTemplate();

  absl::string_view name() const override { return "global_pool_reduce"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "global_pool"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  // Errors: INVALID_ARGUMENT when the op is not global_pool, N*C or H*W
  // exceed 32-bit ints, or a buffer exceeds the device's max allocation.
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Errors: INVALID_ARGUMENT naming the constraint (see the .cc file).
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // "input" (N*C*H*W) and "output" (N*C), in the workload's dtype.
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  // Kernel global_pool: global (WPC, ceil(N*C/CPG)*CPG), local (WPC, CPG);
  // args N C H W input output.
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  // Kernel global_pool_reference: one work-item per plane, global N*C.
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // N*C*H*W: one compare (max) or add (avg) per input element.
  double Flops(const Workload& workload) const override;
  // (N*C*H*W + N*C) elements: input and output once.
  double Bytes(const Workload& workload) const override;
  // See global_pool_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

 private:
  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view GlobalPoolSource();
absl::string_view GlobalPoolReferenceSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_POOL_GLOBAL_POOL_TEMPLATE_H_
