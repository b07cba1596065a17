// The descriptor of pool2d.cl: 2D max or average pooling over NCHW
// tensors (op pool2d, dims N C H W R S SH SW PH PW, attr mode=max|avg),
// fp32 or fp16 storage. Output N x C x P x Q with
//   P = (H + 2*PH - R) / SH + 1, Q = (W + 2*PW - S) / SW + 1
// (floor, ONNX's ceil_mode=0). Max pooling ignores padding; average pooling
// divides by the count of in-bounds elements (ONNX count_include_pad=0).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL2D_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL2D_TEMPLATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Template "pool2d_direct": each work-item computes a PWI x QWI tile of
// output rows and columns of CWG/WGC planes straight from the window
// (optionally through a local-memory input tile). Knobs, in order:
//   PWI  output rows per work-item              1, 2, 4
//   QWI  output columns per work-item           1, 2, 4, 8
//   VW   vector width along Q                   1, 2, 4 (divides QWI)
//   WGQ  work-group size along Q (dimension 0)  1 .. 32
//   WGP  work-group size along P (dimension 1)  1 .. 16
//   WGC  work-group size along planes (dim. 2)  1 .. 8 (divides CWG)
//   CWG  planes (n, c) per work-group           1 .. 16
//   LT   input tile with halo in local memory   0, 1
//   UNR  window dims compiled in, loops unrolled 0, 1
class Pool2dTemplate : public KernelTemplate {
 public:
  Pool2dTemplate();

  absl::string_view name() const override { return "pool2d_direct"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "pool2d"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  // Errors: INVALID_ARGUMENT when the op is not pool2d, the window is
  // larger than the padded input, the padding exceeds half the window
  // (2*PH > R or 2*PW > S: windows wholly in the padding, which ONNX
  // leaves undefined and PyTorch refuses), N*C or H*W exceed 32-bit ints,
  // or a buffer exceeds the device's max allocation.
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Errors: INVALID_ARGUMENT naming the constraint (see the .cc file).
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // "input" (N*C*H*W) and "output" (N*C*P*Q), in the workload's dtype.
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  // Kernel pool2d: global (ceil(Q/QWG)*WGQ, ceil(P/PWG)*WGP,
  // ceil(N*C/CWG)*WGC), local (WGQ, WGP, WGC); args N C H W R S SH SW PH PW
  // input output.
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  // Kernel pool2d_reference: one work-item per output, global (Q, P, N*C).
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // N*C*P*Q*R*S: one compare (max) or add (avg) per window element; the
  // average's division is not counted.
  double Flops(const Workload& workload) const override;
  // (N*C*H*W + N*C*P*Q) elements: input and output once.
  double Bytes(const Workload& workload) const override;
  // See pool2d_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

  // Output rows P and columns Q of a pool2d workload (may be < 1 for a
  // window larger than the padded input, which CheckWorkload refuses).
  static int64_t OutputRows(const Workload& workload);
  static int64_t OutputCols(const Workload& workload);

 private:
  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view Pool2dSource();
absl::string_view Pool2dReferenceSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_POOL_POOL2D_TEMPLATE_H_
