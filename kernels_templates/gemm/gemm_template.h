// The descriptor of gemm.cl and its variants: single-precision (or fp16
// storage) C = A * B, row-major, any M, N, K >= 1. Three templates share
// the kernel, knobs, constraints and geometry (gemm_geometry.h):
//   gemm_tiled       op gemm: C(MxN) = A(MxK) * B(KxN);
//   dense_gemm       op dense: output(MxN) = input(MxK) * weight(KxN),
//                    epilogue per output feature (column);
//   conv2d_1x1_gemm  op conv2d with a 1x1 kernel, stride 1, no padding,
//                    groups 1 (NCHW): per batch, output(K x HW) =
//                    weight(K x C) * input(C x HW), epilogue per output
//                    channel (row).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_

#include <string>

#include "kernels_templates/gemm/gemm_geometry.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

class GemmTemplate : public KernelTemplate {
 public:
  enum class Variant { kGemm, kDense, kConv1x1 };

  explicit GemmTemplate(Variant variant = Variant::kGemm);

  absl::string_view name() const override;
  int version() const override { return 2; }
  absl::string_view op() const override;
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }
  bool Accepts(const Workload& workload) const override;

  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 2*M*N*K per batch: one multiply and one add per term.
  double Flops(const Workload& workload) const override;
  // (M*K + K*N + M*N) elements per batch, A counted once.
  double Bytes(const Workload& workload) const override;
  double rtol() const override { return 1e-4; }
  // See gemm_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

  // The knob struct of gemm_geometry.h for a config in knobs() order.
  static tunefleet_gemm::GemmKnobs ToGemmKnobs(const KnobValues& config);

 private:
  // The matrix problem of a workload: C(m x n) = A(m x k) * B(k x n),
  // `batch` times with A shared.
  struct Problem {
    int64_t m, n, k, batch;
  };
  Problem ProblemOf(const Workload& w) const;
  std::vector<ArgDesc> Args(const Workload& w) const;

  Variant variant_;
  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view GemmSource();
absl::string_view GemmReferenceSource();
absl::string_view GemmGeometryHeader();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_TEMPLATE_H_
