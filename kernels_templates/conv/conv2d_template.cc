#include "kernels_templates/conv/conv2d_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of Conv2dTemplate::Knobs' fields.
std::vector<Knob> Conv2dKnobList() {
  return {
      {"KWI", {1, 2, 4, 8}, true},    {"KWG", {1, 2, 4, 8, 16, 32}, true},
      {"PWI", {1, 2, 4}, true},       {"QWI", {1, 2, 4, 8}, true},
      {"WGP", {1, 2, 4, 8}, true},    {"WGQ", {1, 2, 4, 8, 16, 32}, true},
      {"VW", {1, 2, 4}, true},        {"CB", {1, 2, 4, 8}, true},
      {"LI", {0, 1}, false},          {"LW", {0, 1}, false},
      {"UNROLL", {1, 2, 4, 8}, true},
  };
}

// Largest register tile (accumulators per work-item), as for the GEMM.
constexpr int64_t kMaxRegisterTile = 64;

}  // namespace

int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  // Floor division; a negative span means the window does not fit.
  return span < 0 ? 0 : span / stride + 1;
}

ConvWindow ConvWindow::Of(const Workload& w) {
  ConvWindow c;
  c.r = w.dim("R");
  c.s = w.dim("S");
  c.sh = w.dim("SH");
  c.sw = w.dim("SW");
  c.ph = w.dim("PH");
  c.pw = w.dim("PW");
  c.dh = std::max<int64_t>(w.dim("DH"), 1);  // pool2d has no dilation
  c.dw = std::max<int64_t>(w.dim("DW"), 1);
  c.p = ConvOutputSize(w.dim("H"), c.r, c.sh, c.ph, c.dh);
  c.q = ConvOutputSize(w.dim("W"), c.s, c.sw, c.pw, c.dw);
  return c;
}

std::string ConvWindow::Defines() const {
  return absl::StrCat(" -DWR=", r, " -DWS=", s, " -DWSH=", sh, " -DWSW=", sw,
                      " -DWPH=", ph, " -DWPW=", pw, " -DWDH=", dh,
                      " -DWDW=", dw);
}

int64_t ConvWindow::TileRows(int64_t rows) const {
  return (rows - 1) * sh + (r - 1) * dh + 1;
}

int64_t ConvWindow::TileCols(int64_t cols) const {
  return (cols - 1) * sw + (s - 1) * dw + 1;
}

absl::Status CheckConvWorkload(const KernelTemplate& tmpl, const Workload& w,
                               const DeviceLimits& limits) {
  const ConvWindow win = ConvWindow::Of(w);
  if (win.p < 1 || win.q < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        w.Canonical(), ": the dilated window (R=", win.r, " DH=", win.dh,
        ", S=", win.s, " DW=", win.dw, ") is larger than the padded input (",
        w.dim("H") + 2 * win.ph, " x ", w.dim("W") + 2 * win.pw,
        "), so the output is empty"));
  }
  // Kernels index with 32-bit ints up to a plane, and get_global_id(2)
  // covers N times the channels; padded sizes must fit too.
  const int64_t channels = std::max(w.dim("C"), w.dim("K"));
  if (w.dim("N") * channels > kMaxDim || w.dim("H") + 2 * win.ph > kMaxDim ||
      w.dim("W") + 2 * win.pw > kMaxDim || w.dim("H") * w.dim("W") > kMaxDim ||
      win.p * win.q > kMaxDim) {
    return absl::InvalidArgumentError(absl::StrCat(
        w.Canonical(), " is too large for template ", tmpl.name(),
        " (N*channels, padded sizes and H*W must stay below 2^31)"));
  }
  return CheckBuffersFit(tmpl, w, limits);
}

double ConvTensorBytes(const KernelTemplate& tmpl, const Workload& w) {
  double elements = 0;
  for (const BufferDesc& b : tmpl.Buffers(w)) {
    if (b.name == "input" || b.name == "weight" || b.name == "output") {
      elements += static_cast<double>(b.elements);
    }
  }
  return elements * ElementBytes(w);
}

uint64_t Conv2dTemplate::Knobs::LocalMemBytes(const ConvWindow& win) const {
  const int64_t input_tile =
      li * cb * win.TileRows(wgp * pwi) * win.TileCols(wgq * qwi);
  const int64_t weight_tile = lw * kwg * cb * win.r * win.s;
  return static_cast<uint64_t>(input_tile + weight_tile) * sizeof(float);
}

Conv2dTemplate::Conv2dTemplate()
    : knobs_(Conv2dKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), DirectConvSource(),
                           Conv2dSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), Conv2dReferenceSource())) {}

Conv2dTemplate::Knobs Conv2dTemplate::ToKnobs(const KnobValues& c) {
  Knobs k;
  k.kwi = c[0];
  k.kwg = c[1];
  k.pwi = c[2];
  k.qwi = c[3];
  k.wgp = c[4];
  k.wgq = c[5];
  k.vw = c[6];
  k.cb = c[7];
  k.li = c[8];
  k.lw = c[9];
  k.unroll = c[10];
  return k;
}

absl::Status Conv2dTemplate::CheckWorkload(const Workload& w,
                                           const DeviceLimits& limits) const {
  if (!Accepts(w)) {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", name(), " does not run ", w.Canonical()));
  }
  const int64_t c = w.dim("C"), k = w.dim("K"), g = w.dim("G");
  if (c % g != 0 || k % g != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        w.Canonical(), ": groups G=", g, " must divide both input channels C=",
        c, " and output channels K=", k));
  }
  return CheckConvWorkload(*this, w, limits);
}

absl::Status Conv2dTemplate::CheckConfig(const KnobValues& config,
                                         const Workload& w,
                                         const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const char* why = nullptr;
  if (k.kwg % k.kwi != 0) {
    why = "KWI must divide KWG";
  } else if (k.qwi % k.vw != 0) {
    why = "VW must divide QWI";
  } else if (k.kwi * k.pwi * k.qwi > kMaxRegisterTile) {
    why = "register tile KWI*PWI*QWI > 64";
  } else if (k.cb > 1 && k.li == 0 && k.lw == 0) {
    why = "CB > 1 needs a local tile (LI=1 or LW=1)";
  } else if (k.unroll > win.r * win.s) {
    why = "UNROLL exceeds the R*S window taps";
  }
  if (why != nullptr) return ConfigStatus(*this, config, why);
  return CheckWorkGroup(
      *this, config,
      {.local = {k.wgq, k.wgp, k.kwg / k.kwi},
       .local_mem_bytes = k.LocalMemBytes(win),
       .local_mem_reason =
           "local memory tiles exceed the device's local memory"},
      limits);
}

std::vector<BufferDesc> Conv2dTemplate::Buffers(const Workload& w) const {
  const std::string& dtype = w.dtype();
  const ConvWindow win = ConvWindow::Of(w);
  const uint64_t n = w.dim("N"), c = w.dim("C"), h = w.dim("H"),
                 wd = w.dim("W"), k = w.dim("K"), g = w.dim("G");
  const uint64_t cg = c / g;
  std::vector<BufferDesc> b = {
      {"input", n * c * h * wd, false, 1, dtype},
      {"weight", k * cg * static_cast<uint64_t>(win.r * win.s), false, 2,
       dtype},
      {"output",
       n * k * static_cast<uint64_t>(std::max<int64_t>(win.p, 0)) *
           static_cast<uint64_t>(std::max<int64_t>(win.q, 0)),
       true, 0, dtype}};
  AddEpilogueBuffers(w.dim("K"), &b);
  return b;
}

std::vector<ArgDesc> Conv2dTemplate::Args(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  std::vector<ArgDesc> args;
  // conv2d's dims in canonical order, then the output size P, Q.
  for (const char* dim : {"N", "C", "H", "W", "K", "R", "S", "SH", "SW", "PH",
                          "PW", "DH", "DW", "G"}) {
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

LaunchDesc Conv2dTemplate::Launch(const KnobValues& config,
                                  const Workload& w) const {
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const int64_t g = w.dim("G");
  const int64_t kg = w.dim("K") / g;
  const int64_t kdim = k.kwg / k.kwi;
  const int64_t groups_q = CeilDiv(win.q, k.wgq * k.qwi);
  const int64_t groups_p = CeilDiv(win.p, k.wgp * k.pwi);
  const int64_t groups_k = w.dim("N") * g * CeilDiv(kg, k.kwg);
  std::string options = absl::StrCat(
      "-DKWI=", k.kwi, " -DKWG=", k.kwg, " -DPWI=", k.pwi, " -DQWI=", k.qwi,
      " -DWGP=", k.wgp, " -DWGQ=", k.wgq, " -DVW=", k.vw, " -DCB=", k.cb,
      " -DLI=", k.li, " -DLW=", k.lw, " -DUNROLL=", k.unroll, win.Defines(),
      PreambleDefines(w));
  return LaunchDesc{source_,
                    "conv2d",
                    std::move(options),
                    {static_cast<uint64_t>(groups_q * k.wgq),
                     static_cast<uint64_t>(groups_p * k.wgp),
                     static_cast<uint64_t>(groups_k * kdim)},
                    {static_cast<uint64_t>(k.wgq), static_cast<uint64_t>(k.wgp),
                     static_cast<uint64_t>(kdim)},
                    Args(w)};
}

LaunchDesc Conv2dTemplate::ReferenceLaunch(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  return LaunchDesc{reference_source_,
                    "conv2d_reference",
                    PreambleDefines(w),
                    {static_cast<uint64_t>(win.q), static_cast<uint64_t>(win.p),
                     static_cast<uint64_t>(w.dim("N") * w.dim("K"))},
                    {},
                    Args(w)};
}

double Conv2dTemplate::Flops(const Workload& w) const {
  const ConvWindow win = ConvWindow::Of(w);
  const double cg = static_cast<double>(w.dim("C") / w.dim("G"));
  return 2.0 * static_cast<double>(w.dim("N")) *
         static_cast<double>(w.dim("K")) * static_cast<double>(win.p) *
         static_cast<double>(win.q) * cg * static_cast<double>(win.r) *
         static_cast<double>(win.s);
}

double Conv2dTemplate::Bytes(const Workload& w) const {
  return ConvTensorBytes(*this, w);
}

std::vector<Feature> Conv2dTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const Knobs k = ToKnobs(config);
  const ConvWindow win = ConvWindow::Of(w);
  const double g = static_cast<double>(w.dim("G"));
  const double kg = static_cast<double>(w.dim("K") / w.dim("G"));
  const double p = static_cast<double>(win.p), q = static_cast<double>(win.q);
  const double tile_p = static_cast<double>(k.wgp * k.pwi);
  const double tile_q = static_cast<double>(k.wgq * k.qwi);
  const double tile_k = static_cast<double>(k.kwg);
  // Work-groups: image x group x channel tiles x row tiles x column tiles.
  const double groups_k = std::ceil(kg / tile_k);
  const double groups_p = std::ceil(p / tile_p);
  const double groups_q = std::ceil(q / tile_q);
  const double groups =
      static_cast<double>(w.dim("N")) * g * groups_k * groups_p * groups_q;
  const double wg = static_cast<double>(k.WorkGroupSize());
  // FLOPs per byte a work-group reads from global memory per input
  // channel: 2*KWG*TP*TQ*R*S FLOPs over its input tile TH x TW and its
  // weights KWG x R x S (the tiling bound of direct convolution, as for
  // GEMM in Volkov & Demmel, SC'08; halo reads included).
  const double rs = static_cast<double>(win.r * win.s);
  const double tile_in = static_cast<double>(win.TileRows(k.wgp * k.pwi) *
                                             win.TileCols(k.wgq * k.qwi));
  const double intensity = 2.0 * tile_k * tile_p * tile_q * rs /
                           (ElementBytes(w) * (tile_in + tile_k * rs));
  // Work done on padding: computed outputs over useful ones (channel, row
  // and column tiles rounded up).
  const double padding = groups_k * tile_k * groups_p * tile_p * groups_q *
                         tile_q / std::max(kg * p * q, 1.0);
  const double local_bytes = static_cast<double>(k.LocalMemBytes(win));
  return LaunchFeatures({.work_group_size = wg,
                         .work_groups = groups,
                         .local_mem_bytes = local_bytes},
                        limits,
                        {"log2_register_tile",
                         std::log2(static_cast<double>(k.kwi * k.pwi * k.qwi))},
                        {{"arithmetic_intensity", intensity},
                         {"vector_width", static_cast<double>(k.vw)}},
                        {{"padding_factor", padding}});
}

}  // namespace tunefleet::templates
