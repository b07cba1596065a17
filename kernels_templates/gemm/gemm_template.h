// The descriptor of gemm.cl: single-precision C = A * B, row-major, any
// M, N, K >= 1. Knobs, constraints and geometry are in gemm_geometry.h.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_

#include "kernels_templates/gemm/gemm_geometry.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

class GemmTemplate : public KernelTemplate {
 public:
  GemmTemplate();

  absl::string_view name() const override { return "gemm_tiled"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "gemm"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override;

  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 2*M*N*K: one multiply and one add per term.
  double Flops(const Workload& workload) const override;
  // See DerivedFeatures() in gemm_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

  // The knob struct of gemm_geometry.h for a config in knobs() order.
  static tunefleet_gemm::GemmKnobs ToGemmKnobs(const KnobValues& config);

 private:
  std::vector<Knob> knobs_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view GemmSource();
absl::string_view GemmReferenceSource();
absl::string_view GemmGeometryHeader();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_
