// The descriptor of conv2d.cl: direct 2D convolution (op conv2d), NCHW, any
// kernel size, stride, zero padding, dilation and groups, with the fused
// per-output-channel epilogue of common/epilogue.cl and fp32 or fp16
// storage. 1x1 convolutions with stride 1, no padding and one group go to
// conv2d_1x1_gemm first (the registry lists it before this template).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_CONV_CONV2D_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_CONV_CONV2D_TEMPLATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Output size of a convolution window along one axis: (in + 2*pad -
// dilation*(kernel-1) - 1) / stride + 1 (floor division, as in ONNX Conv
// and PyTorch's Conv2d docs). Returns 0 or less when the dilated window is
// larger than the padded input. All arguments >= 1, pad >= 0.
int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       int64_t dilation);

// The window of a conv2d, depthwise_conv2d or pool2d workload (dims R, S,
// SH, SW, PH, PW, DH, DW; missing dilations read as 1) and its output size.
struct ConvWindow {
  int64_t r = 1, s = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t p = 0, q = 0;  // output rows and columns (ConvOutputSize)

  static ConvWindow Of(const Workload& workload);
  // " -DWR=.. -DWS=.. -DWSH=.. -DWSW=.. -DWPH=.. -DWPW=.. -DWDH=.. -DWDW=..":
  // the window defines of conv2d.cl and depthwise.cl.
  std::string Defines() const;
  // Input rows / columns an output tile of `rows` x `cols` reads (its
  // halo included): (rows-1)*SH + (R-1)*DH + 1, likewise for columns. The
  // TH and TW of conv2d.cl.
  int64_t TileRows(int64_t rows) const;
  int64_t TileCols(int64_t cols) const;
};

// Checks what every direct convolution template needs of a workload: an
// output of at least 1 x 1, dims small enough for 32-bit kernel indices,
// and buffers within the device's max allocation. Errors: INVALID_ARGUMENT
// naming the dim or buffer.
absl::Status CheckConvWorkload(const KernelTemplate& tmpl,
                               const Workload& workload,
                               const DeviceLimits& limits);

// Bytes a run of a direct convolution template moves at least: its input,
// weight and output buffers (tmpl.Buffers(workload); the epilogue's scale
// and shift left out), each once, at the workload's element size.
double ConvTensorBytes(const KernelTemplate& tmpl, const Workload& workload);

// conv2d_direct (op conv2d, version 1): conv2d.cl with register tiles over
// output channels, rows and columns, optional __local input and weight
// tiles, and the naive conv2d_reference.cl as verifier and baseline.
// Immutable; thread-safe.
class Conv2dTemplate : public KernelTemplate {
 public:
  // One config of conv2d.cl, in knobs() order; conv2d.cl's header gives the
  // meaning of each knob.
  struct Knobs {
    int64_t kwi = 1, kwg = 1, pwi = 1, qwi = 1, wgp = 1, wgq = 1, vw = 1;
    int64_t cb = 1, li = 0, lw = 0, unroll = 1;

    int64_t WorkGroupSize() const { return wgq * wgp * (kwg / kwi); }
    // Static __local bytes of conv2d.cl for this window: the input tile
    // CB x TH x TW when LI, the weights KWG x CB x R x S when LW, as float.
    uint64_t LocalMemBytes(const ConvWindow& window) const;
  };

  Conv2dTemplate();

  absl::string_view name() const override { return "conv2d_direct"; }
  int version() const override { return 1; }
  absl::string_view op() const override { return "conv2d"; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  // Errors: INVALID_ARGUMENT for another op, C or K not a multiple of G, an
  // empty output, or CheckConvWorkload's reasons.
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  // Constraints: KWI divides KWG; VW divides QWI; register tile
  // KWI*PWI*QWI <= 64; CB > 1 only with a local tile (LI or LW; else it
  // changes nothing); UNROLL <= R*S; work-group size and shape within the
  // device's; local tiles within its local memory.
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // input N*C*H*W, weight K*(C/G)*R*S, output N*K*P*Q, scale and shift K.
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  // 2*N*K*P*Q*(C/G)*R*S: one multiply and one add per tap, padding taps
  // included (the usual convention, e.g. TVM's and cuDNN's benchmarks).
  double Flops(const Workload& workload) const override;
  // (N*C*H*W + K*(C/G)*R*S + N*K*P*Q) elements, each once.
  double Bytes(const Workload& workload) const override;
  // See conv2d_template.cc for the list and formulas.
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
// DirectConvSource() is direct_conv.cl, what conv2d.cl and depthwise.cl
// share; it comes between common/vector.cl and either.
absl::string_view DirectConvSource();
absl::string_view Conv2dSource();
absl::string_view Conv2dReferenceSource();

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_CONV_CONV2D_TEMPLATE_H_
