// gemm_gpu: a second SGEMM template, for big GPUs (gemm_gpu.cl). Block
// tiles staged in local memory (optionally double-buffered), 2D register
// tiles (up to 16 x 8) read from local memory as float4s, vectorised global
// loads. fp32
// only; any M, N, K >= 1 (vector loads need N and K divisible by LOADV,
// which the constraints check per workload). Chosen with
// `--template gemm_gpu`; gemm_tiled stays the default for op gemm.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GPU_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GPU_TEMPLATE_H_

#include <string>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Thread-compatible (immutable after construction).
class GemmGpuTemplate : public KernelTemplate {
 public:
  GemmGpuTemplate();

  absl::string_view name() const override { return "gemm_gpu"; }
  // v2: float4-typed local and global accesses (ld.shared.v4 on NVIDIA),
  // register tiles up to 16 x 8, block tiles up to 256.
  int version() const override { return 2; }
  absl::string_view op() const override { return "gemm"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }
  // gemm workloads in fp32.
  bool Accepts(const Workload& workload) const override;

  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Constraints: TM | BM, TN | BN; TM * TN <= 128 accumulators; at most 256
  // work-items; STRN only with
  // TN % 4 == 0; WTILE only with BN/TN % 8 == 0 and BM/TM % 4 == 0 (whole
  // 8 x 4 warp patches); the A and B tiles split evenly into
  // LOADV-vectors over the work-group; BK and BN multiples of LOADV; N and
  // K multiples of LOADV; the work-group and its local memory,
  // (DB + 1) * BK * (BM + 4 + BN) * 4 bytes, within the device's limits.
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 2*M*N*K.
  double Flops(const Workload& workload) const override;
  // (M*K + K*N + M*N) * 4 bytes.
  double Bytes(const Workload& workload) const override;
  double rtol() const override { return 1e-4; }
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

 private:
  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

absl::string_view GemmGpuSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GPU_TEMPLATE_H_
