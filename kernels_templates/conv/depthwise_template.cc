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

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

uint64_t DepthwiseTemplate::Knobs::LocalMemBytes(const ConvWindow& win) const {
  return static_cast<uint64_t>(li * cwg * win.TileRows(wgp * pwi) *
                               win.TileCols(wgq * qwi)) *
         sizeof(float);
}

DepthwiseTemplate::DepthwiseTemplate()
    : knobs_(DepthwiseKnobList()),
      source_(absl::StrCat(KernelPreamble(), DepthwiseSource())),
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
  if (config.size() != knobs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("config has ", config.size(),
                                                   " values, template has ",
                                                   knobs().size(), " knobs"));
  }
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const char* why = nullptr;
  if (k.qwi % k.vw != 0) {
    why = "VW must divide QWI";
  } else if (k.pwi * k.qwi > kMaxRegisterTile) {
    why = "register tile PWI*QWI > 64";
  } else if (k.unroll > win.r * win.s) {
    why = "UNROLL exceeds the R*S window taps";
  } else if (static_cast<uint64_t>(k.WorkGroupSize()) >
             limits.max_work_group_size) {
    why = "work-group size exceeds the device's maximum";
  } else if (static_cast<uint64_t>(k.wgq) > limits.max_work_item_sizes[0] ||
             static_cast<uint64_t>(k.wgp) > limits.max_work_item_sizes[1] ||
             static_cast<uint64_t>(k.cwg) > limits.max_work_item_sizes[2]) {
    why = "work-group dimension exceeds the device's work-item sizes";
  } else if (k.LocalMemBytes(win) > limits.local_mem_bytes) {
    why = "local memory tile exceeds the device's local memory";
  }
  if (why != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(ConfigString(config), ": ", why));
  }
  return absl::OkStatus();
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
  double elements = 0;
  for (const BufferDesc& b : Buffers(w)) {
    if (b.name == "input" || b.name == "weight" || b.name == "output") {
      elements += static_cast<double>(b.elements);
    }
  }
  return elements * ElementBytes(w);
}

double DepthwiseTemplate::Tolerance(const Workload& w) const {
  return ToleranceFor(w);
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
  const double cus = std::max<double>(limits.compute_units, 1);
  // Fraction of the last wave of work-groups that has work: 1 when the
  // groups fill every compute unit in every wave.
  const double waves = std::ceil(groups / cus);
  const double wave_efficiency = groups / (waves * cus);
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
  return {
      {"log2_work_group_size", std::log2(wg)},
      {"log2_work_groups", std::log2(groups)},
      {"log2_work_items", std::log2(groups * wg)},
      {"log2_register_tile", std::log2(static_cast<double>(k.pwi * k.qwi))},
      {"log2_local_mem_bytes", std::log2(1.0 + local_bytes)},
      {"local_mem_fraction",
       limits.local_mem_bytes ? local_bytes / limits.local_mem_bytes : 0.0},
      {"arithmetic_intensity", intensity},
      {"vector_width", static_cast<double>(k.vw)},
      {"groups_per_compute_unit", groups / cus},
      {"wave_efficiency", wave_efficiency},
      {"padding_factor", padding},
  };
}

}  // namespace tunefleet::templates
