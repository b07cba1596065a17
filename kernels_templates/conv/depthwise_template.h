// The descriptor of depthwise.cl: depthwise 2D convolution (op
// depthwise_conv2d, channel multiplier 1), NCHW, any kernel size, stride,
// zero padding and dilation, with the fused per-channel epilogue of
// common/epilogue.cl and fp32 or fp16 storage.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_CONV_DEPTHWISE_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_CONV_DEPTHWISE_TEMPLATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_templates/conv/conv2d_template.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// depthwise_direct (op depthwise_conv2d, version 1): depthwise.cl with a
// register tile over output rows and columns, several channels per
// work-group and an optional __local input tile, and the naive
// depthwise_reference.cl as verifier and baseline. Immutable; thread-safe.
class DepthwiseTemplate : public KernelTemplate {
 public:
  // One config of depthwise.cl, in knobs() order; depthwise.cl's header
  // gives the meaning of each knob.
  struct Knobs {
    int64_t pwi = 1, qwi = 1, wgp = 1, wgq = 1, cwg = 1, vw = 1;
    int64_t li = 0, unroll = 1;

    int64_t WorkGroupSize() const { return wgq * wgp * cwg; }
    // Static __local bytes of depthwise.cl for this window: the input tile
    // CWG x TH x TW as float when LI, else 0.
    uint64_t LocalMemBytes(const ConvWindow& window) const;
  };

  DepthwiseTemplate();

  absl::string_view name() const override { return "depthwise_direct"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "depthwise_conv2d"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  // Errors: INVALID_ARGUMENT for another op or CheckConvWorkload's reasons
  // (an empty output, dims too large, buffers over the max allocation).
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Constraints: VW divides QWI; register tile PWI*QWI <= 64; UNROLL <=
  // R*S; work-group size and shape within the device's; the local tile
  // within its local memory.
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // input N*C*H*W, weight C*R*S, output N*C*P*Q, scale and shift C.
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 2*N*C*P*Q*R*S: one multiply and one add per tap, padding included.
  double Flops(const Workload& workload) const override;
  // (N*C*H*W + C*R*S + N*C*P*Q) elements, each once.
  double Bytes(const Workload& workload) const override;
  // See depthwise_template.cc for the list and formulas.
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

  // The knob struct of a config in knobs() order.
  static Knobs ToKnobs(const KnobValues& config);

 private:
  std::vector<ArgDesc> Args(const Workload& workload) const;

  std::vector<Knob> knobs_;
  std::string source_;
  std::string reference_source_;
};

// Embedded sources (generated at build time from the .cl files).
absl::string_view DepthwiseSource();
absl::string_view DepthwiseReferenceSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_CONV_DEPTHWISE_TEMPLATE_H_
