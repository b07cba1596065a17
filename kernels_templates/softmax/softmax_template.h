// The descriptor of softmax.cl: numerically stable softmax over the last
// axis of an N x D row-major tensor (op softmax, dims N D), fp32 or fp16
// storage: output[n, d] = exp(x[n, d] - max_n) / sum_d' exp(x[n, d'] -
// max_n).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SOFTMAX_SOFTMAX_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SOFTMAX_SOFTMAX_TEMPLATE_H_

#include <string>
#include <vector>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Template "softmax_rows": WPR work-items per row each keep a running max
// and sum of their share of the row (online softmax), combine them by a
// tree reduction in local memory, then write the outputs; rows that fit in
// one pass (D <= WPR*VW*EPW) stay in registers and are read once. Knobs,
// in order:
//   WPR  work-items per row (dimension 0)   1, 2, 4, ..., 256
//   RPG  rows per work-group (dimension 1)  1, 2, 4, 8, 16
//   VW   vector width along D               1, 2, 4, 8
//   EPW  vectors per work-item per pass     1, 2, 4, 8
class SoftmaxTemplate : public KernelTemplate {
 public:
  SoftmaxTemplate();

  absl::string_view name() const override { return "softmax_rows"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "softmax"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  // Errors: INVALID_ARGUMENT when the op is not softmax, D exceeds 2^30
  // (column indices of a pass must fit 32-bit ints), or a buffer exceeds
  // the device's max allocation.
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Errors: INVALID_ARGUMENT naming the constraint (see the .cc file).
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // "input" and "output", N*D each, in the workload's dtype.
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  // Kernel softmax: global (WPR, ceil(N/RPG)*RPG), local (WPR, RPG); args
  // N D input output.
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  // Kernel softmax_reference: one work-item per row, global N.
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 4*N*D: per element a subtract, an exp, an add and a divide (the max's
  // compares are not counted; exp counts as one operation).
  double Flops(const Workload& workload) const override;
  // 2*N*D elements: input and output once.
  double Bytes(const Workload& workload) const override;
  // See softmax_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

 private:
  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view SoftmaxSource();
absl::string_view SoftmaxReferenceSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SOFTMAX_SOFTMAX_TEMPLATE_H_
