#include "kernels_templates/conv/depthwise_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of DepthwiseTemplate::Knobs' fields.
std::vector<Knob> DepthwiseKnobList() {
  return {
      {"PWI", {1, 2, 4}, true},        {"QWI", {1, 2, 4, 8}, true},
      {"WGP", {1, 2, 4, 8, 16}, true}, {"WGQ", {1, 2, 4, 8, 16, 32}, true},
      {"CWG", {1, 2, 4, 8}, true},     {"VW", {1, 2, 4}, true},
      {"LI", {0, 1}, false},           {"UNROLL", {1, 2, 4, 8}, true},
  };
}

// Largest register tile (accumulators per work-item), as for the GEMM.
constexpr int64_t kMaxRegisterTile = 64;

}  // namespace

uint64_t DepthwiseTemplate::Knobs::LocalMemBytes(const ConvWindow& win) const {
  return static_cast<uint64_t>(li * cwg * win.TileRows(wgp * pwi) *
                               win.TileCols(wgq * qwi)) *
         sizeof(float);
}

DepthwiseTemplate::DepthwiseTemplate()
    : knobs_(DepthwiseKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), DirectConvSource(),
                           DepthwiseSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), DepthwiseReferenceSource())) {}

DepthwiseTemplate::Knobs DepthwiseTemplate::ToKnobs(const KnobValues& c) {
  Knobs k;
  k.pwi = c[0];
  k.qwi = c[1];
  k.wgp = c[2];
  k.wgq = c[3];
  k.cwg = c[4];
  k.vw = c[5];
  k.li = c[6];
  k.unroll = c[7];
  return k;
}

absl::Status DepthwiseTemplate::CheckWorkload(
    const Workload& w, const DeviceLimits& limits) const {
  if (!Accepts(w)) {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", name(), " does not run ", w.Canonical()));
  }
  return CheckConvWorkload(*this, w, limits);
}

absl::Status DepthwiseTemplate::CheckConfig(const KnobValues& config,
                                            const Workload& w,
                                            const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const char* why = nullptr;
  if (k.qwi % k.vw != 0) {
    why = "VW must divide QWI";
  } else if (k.pwi * k.qwi > kMaxRegisterTile) {
    why = "register tile PWI*QWI > 64";
  } else if (k.unroll > win.r * win.s) {
    why = "UNROLL exceeds the R*S window taps";
  }
  if (why != nullptr) return ConfigStatus(*this, config, why);
  return CheckWorkGroup(
      *this, config,
      {.local = {k.wgq, k.wgp, k.cwg}, .local_mem_bytes = k.LocalMemBytes(win)},
      limits);
}

std::vector<BufferDesc> DepthwiseTemplate::Buffers(const Workload& w) const {
  const std::string& dtype = w.dtype();
  const ConvWindow win = ConvWindow::Of(w);
  const uint64_t n = w.dim("N"), c = w.dim("C"), h = w.dim("H"),
                 wd = w.dim("W");
  std::vector<BufferDesc> b = {
      {"input", n * c * h * wd, false, 1, dtype},
      {"weight", c * static_cast<uint64_t>(win.r * win.s), false, 2, dtype},
      {"output",
       n * c * static_cast<uint64_t>(std::max<int64_t>(win.p, 0)) *
           static_cast<uint64_t>(std::max<int64_t>(win.q, 0)),
       true, 0, dtype}};
  AddEpilogueBuffers(w.dim("C"), &b);
  return b;
}

std::vector<ArgDesc> DepthwiseTemplate::Args(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  std::vector<ArgDesc> args;
  // depthwise_conv2d's dims in canonical order, then the output size P, Q.
  for (const char* dim :
       {"N", "C", "H", "W", "R", "S", "SH", "SW", "PH", "PW", "DH", "DW"}) {
    args.push_back(ArgDesc::Int(w.dim(dim)));
  }
  args.push_back(ArgDesc::Int(win.p));
  args.push_back(ArgDesc::Int(win.q));
  for (const char* b : {"input", "weight", "output"}) {
    args.push_back(ArgDesc::Buffer(b));
  }
  AddEpilogueArgs(w, &args);
  return args;
}

LaunchDesc DepthwiseTemplate::Launch(const KnobValues& config,
                                     const Workload& w) const {
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const int64_t groups_q = CeilDiv(win.q, k.wgq * k.qwi);
  const int64_t groups_p = CeilDiv(win.p, k.wgp * k.pwi);
  const int64_t groups_c = w.dim("N") * CeilDiv(w.dim("C"), k.cwg);
  std::string options = absl::StrCat(
      "-DPWI=", k.pwi, " -DQWI=", k.qwi, " -DWGP=", k.wgp, " -DWGQ=", k.wgq,
      " -DCWG=", k.cwg, " -DVW=", k.vw, " -DLI=", k.li, " -DUNROLL=", k.unroll,
      win.Defines(), PreambleDefines(w));
  return LaunchDesc{source_,
                    "depthwise",
                    std::move(options),
                    {static_cast<uint64_t>(groups_q * k.wgq),
                     static_cast<uint64_t>(groups_p * k.wgp),
                     static_cast<uint64_t>(groups_c * k.cwg)},
                    {static_cast<uint64_t>(k.wgq), static_cast<uint64_t>(k.wgp),
                     static_cast<uint64_t>(k.cwg)},
                    Args(w)};
}

LaunchDesc DepthwiseTemplate::ReferenceLaunch(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  return LaunchDesc{reference_source_,
                    "depthwise_reference",
                    PreambleDefines(w),
                    {static_cast<uint64_t>(win.q), static_cast<uint64_t>(win.p),
                     static_cast<uint64_t>(w.dim("N") * w.dim("C"))},
                    {},
                    Args(w)};
}

double DepthwiseTemplate::Flops(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  return 2.0 * static_cast<double>(w.dim("N")) *
         static_cast<double>(w.dim("C")) * static_cast<double>(win.p) *
         static_cast<double>(win.q) * static_cast<double>(win.r) *
         static_cast<double>(win.s);
}

double DepthwiseTemplate::Bytes(const Workload& w) const {
  return ConvTensorBytes(*this, w);
}

std::vector<Feature> DepthwiseTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const double c = static_cast<double>(w.dim("C"));
  const double p = static_cast<double>(win.p), q = static_cast<double>(win.q);
  const double tile_p = static_cast<double>(k.wgp * k.pwi);
  const double tile_q = static_cast<double>(k.wgq * k.qwi);
  const double tile_c = static_cast<double>(k.cwg);
  // Work-groups: image x channel tiles x row tiles x column tiles.
  const double groups_c = std::ceil(c / tile_c);
  const double groups_p = std::ceil(p / tile_p);
  const double groups_q = std::ceil(q / tile_q);
  const double groups =
      static_cast<double>(w.dim("N")) * groups_c * groups_p * groups_q;
  const double wg = static_cast<double>(k.WorkGroupSize());
  // FLOPs per byte a work-group reads from global memory: 2*TP*TQ*R*S per
  // channel over the channel's input tile TH x TW (halo included) and its
  // R x S taps. Depthwise convolution has no reuse across channels, so
  // this is at most about R*S/2 FLOPs per element for stride 1.
  const double rs = static_cast<double>(win.r * win.s);
  const double tile_in = static_cast<double>(win.TileRows(k.wgp * k.pwi) *
                                             win.TileCols(k.wgq * k.qwi));
  const double intensity =
      2.0 * tile_p * tile_q * rs / (ElementBytes(w) * (tile_in + rs));
  // Work done on padding: computed outputs over useful ones (channel, row
  // and column tiles rounded up).
  const double padding = groups_c * tile_c * groups_p * tile_p * groups_q *
                         tile_q / std::max(c * p * q, 1.0);
  const double local_bytes = static_cast<double>(k.LocalMemBytes(win));
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = local_bytes},
      limits,
      {"log2_register_tile", std::log2(static_cast<double>(k.pwi * k.qwi))},
      {{"arithmetic_intensity", intensity},
       {"vector_width", static_cast<double>(k.vw)}},
      {{"padding_factor", padding}});
}

}  // namespace tunefleet::templates
