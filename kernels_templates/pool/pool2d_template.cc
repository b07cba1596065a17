#include "kernels_templates/pool/pool2d_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"
#include "kernels_templates/pool/pool_mode.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of PoolKnobs' fields.
std::vector<Knob> PoolKnobList() {
  return {
      {"PWI", {1, 2, 4}, true},        {"QWI", {1, 2, 4, 8}, true},
      {"VW", {1, 2, 4}, true},         {"WGQ", {1, 2, 4, 8, 16, 32}, true},
      {"WGP", {1, 2, 4, 8, 16}, true}, {"WGC", {1, 2, 4, 8}, true},
      {"CWG", {1, 2, 4, 8, 16}, true}, {"LT", {0, 1}, false},
      {"UNR", {0, 1}, false},
  };
}

// Most accumulators (output vectors' lanes) a work-item keeps per plane.
constexpr int64_t kMaxRegisterTile = 32;
// Largest window UNR=1 unrolls fully.
constexpr int64_t kMaxUnrolledWindow = 64;

struct PoolKnobs {
  int64_t pwi, qwi, vw, wgq, wgp, wgc, cwg, lt, unr;
  int64_t pwg() const { return wgp * pwi; }  // output rows per work-group
  int64_t qwg() const { return wgq * qwi; }  // output columns per group
  int64_t work_group_size() const { return wgq * wgp * wgc; }
};

PoolKnobs ToKnobs(const KnobValues& c) {
  return {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]};
}

// The dims of a workload, planes = N*C, and the output rows and columns.
struct PoolShape {
  int64_t planes, h, w, r, s, sh, sw, ph, pw, p, q;
};

PoolShape ShapeOf(const Workload& w) {
  return {w.dim("N") * w.dim("C"),
          w.dim("H"),
          w.dim("W"),
          w.dim("R"),
          w.dim("S"),
          w.dim("SH"),
          w.dim("SW"),
          w.dim("PH"),
          w.dim("PW"),
          Pool2dTemplate::OutputRows(w),
          Pool2dTemplate::OutputCols(w)};
}

// The local tile's rows and columns (pool2d.cl: TILE_H, TILE_W): the input
// rows and columns the work-group's PWG x QWG outputs read, plus one column
// for the even-lane loads of stride 2.
int64_t TileRows(const PoolKnobs& k, const PoolShape& s) {
  return (k.pwg() - 1) * s.sh + s.r;
}
int64_t TileCols(const PoolKnobs& k, const PoolShape& s) {
  return (k.qwg() - 1) * s.sw + s.s + (s.sw == 2 && k.vw > 1 ? 1 : 0);
}

uint64_t LocalMemBytes(const PoolKnobs& k, const PoolShape& s) {
  if (k.lt == 0) return 0;
  return static_cast<uint64_t>(k.cwg * TileRows(k, s) * TileCols(k, s)) *
         sizeof(float);
}

// OK when the shape is one pool2d.cl computes (see CheckWorkload).
absl::Status CheckShape(const Workload& w) {
  if (w.op() != "pool2d") {
    return absl::InvalidArgumentError(
        absl::StrCat("template pool2d_direct does not run ", w.Canonical()));
  }
  const PoolShape s = ShapeOf(w);
  if (s.h + 2 * s.ph < s.r || s.w + 2 * s.pw < s.s) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.Canonical(), ": the ", s.r, "x", s.s,
                     " window is larger than the padded input"));
  }
  if (2 * s.ph > s.r || 2 * s.pw > s.s) {
    return absl::InvalidArgumentError(absl::StrCat(
        w.Canonical(),
        ": padding exceeds half the window (windows wholly in the padding "
        "have no value)"));
  }
  if (s.planes > kMaxDim || s.h * s.w > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.Canonical(),
                     " is too large for template pool2d_direct"
                     " (N*C and H*W must fit 32-bit ints)"));
  }
  return absl::OkStatus();
}

}  // namespace

Pool2dTemplate::Pool2dTemplate()
    : knobs_(PoolKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), PoolModeSource(),
                           Pool2dSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), Pool2dReferenceSource())) {}

int64_t Pool2dTemplate::OutputRows(const Workload& w) {
  return (w.dim("H") + 2 * w.dim("PH") - w.dim("R")) / w.dim("SH") + 1;
}

int64_t Pool2dTemplate::OutputCols(const Workload& w) {
  return (w.dim("W") + 2 * w.dim("PW") - w.dim("S")) / w.dim("SW") + 1;
}

absl::Status Pool2dTemplate::CheckWorkload(const Workload& w,
                                           const DeviceLimits& limits) const {
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  return CheckBuffersFit(*this, w, limits);
}

absl::Status Pool2dTemplate::CheckConfig(const KnobValues& config,
                                         const Workload& w,
                                         const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  const PoolKnobs k = ToKnobs(config);
  const PoolShape s = ShapeOf(w);
  const char* why = nullptr;
  if (k.qwi % k.vw != 0) {
    why = "VW must divide QWI";
  } else if (k.cwg % k.wgc != 0) {
    why = "WGC must divide CWG";
  } else if (k.pwi * k.qwi > kMaxRegisterTile) {
    why = "register tile PWI*QWI > 32";
  } else if (k.unr == 1 && s.r * s.s > kMaxUnrolledWindow) {
    why = "UNR=1 needs a window of at most 64 elements";
  }
  if (why != nullptr) return ConfigStatus(*this, config, why);
  if (absl::Status fits =
          CheckWorkGroup(*this, config,
                         {.local = {k.wgq, k.wgp, k.wgc},
                          .local_mem_bytes = LocalMemBytes(k, s)},
                         limits);
      !fits.ok()) {
    return fits;
  }
  // Pruning: a work-group tile larger than the output rounded up to a
  // power of two only adds idle work-items.
  if (k.qwg() > NextPow2(s.q)) {
    why = "WGQ*QWI exceeds Q rounded up to a power of two";
  } else if (k.pwg() > NextPow2(s.p)) {
    why = "WGP*PWI exceeds P rounded up to a power of two";
  } else if (k.cwg > NextPow2(s.planes)) {
    why = "CWG exceeds N*C rounded up to a power of two";
  }
  return ConfigStatus(*this, config, why);
}

std::vector<BufferDesc> Pool2dTemplate::Buffers(const Workload& w) const {
  const PoolShape s = ShapeOf(w);
  const uint64_t in = static_cast<uint64_t>(s.planes * s.h * s.w);
  const uint64_t out = static_cast<uint64_t>(
      s.planes * std::max<int64_t>(s.p, 0) * std::max<int64_t>(s.q, 0));
  return {{"input", in, false, 1, w.dtype()},
          {"output", out, true, 0, w.dtype()}};
}

namespace {

// Kernel arguments of both kernels: the workload's dims, input, output.
std::vector<ArgDesc> PoolArgs(const Workload& w) {
  std::vector<ArgDesc> args;
  for (const char* d : {"N", "C", "H", "W", "R", "S", "SH", "SW", "PH", "PW"}) {
    args.push_back(ArgDesc::Int(w.dim(d)));
  }
  args.push_back(ArgDesc::Buffer("input"));
  args.push_back(ArgDesc::Buffer("output"));
  return args;
}

}  // namespace

LaunchDesc Pool2dTemplate::Launch(const KnobValues& config,
                                  const Workload& w) const {
  const PoolKnobs k = ToKnobs(config);
  const PoolShape s = ShapeOf(w);
  std::string options = absl::StrCat(
      "-DPWI=", k.pwi, " -DQWI=", k.qwi, " -DVW=", k.vw, " -DWGQ=", k.wgq,
      " -DWGP=", k.wgp, " -DWGC=", k.wgc, " -DCWG=", k.cwg, " -DLT=", k.lt,
      " -DUNR=", k.unr, " -DSWC=", s.sw <= 2 ? s.sw : 0);
  if (k.lt == 1) {
    absl::StrAppend(&options, " -DTILE_H=", TileRows(k, s),
                    " -DTILE_W=", TileCols(k, s));
  }
  if (k.unr == 1) {
    absl::StrAppend(&options, " -DKR=", s.r, " -DKS=", s.s, " -DKSH=", s.sh,
                    " -DKSW=", s.sw, " -DKPH=", s.ph, " -DKPW=", s.pw);
  }
  absl::StrAppend(&options, PoolModeDefines(w));
  const uint64_t wgq = k.wgq, wgp = k.wgp, wgc = k.wgc;
  return LaunchDesc{source_,
                    "pool2d",
                    options,
                    {CeilDiv(s.q, k.qwg()) * wgq, CeilDiv(s.p, k.pwg()) * wgp,
                     CeilDiv(s.planes, k.cwg) * wgc},
                    {wgq, wgp, wgc},
                    PoolArgs(w)};
}

LaunchDesc Pool2dTemplate::ReferenceLaunch(const Workload& w) const {
  const PoolShape s = ShapeOf(w);
  return LaunchDesc{reference_source_,
                    "pool2d_reference",
                    PoolModeDefines(w).substr(1),
                    {static_cast<uint64_t>(s.q), static_cast<uint64_t>(s.p),
                     static_cast<uint64_t>(s.planes)},
                    {},
                    PoolArgs(w)};
}

double Pool2dTemplate::Flops(const Workload& w) const {
  const PoolShape s = ShapeOf(w);
  return static_cast<double>(s.planes) * s.p * s.q * s.r * s.s;
}

double Pool2dTemplate::Bytes(const Workload& w) const {
  const PoolShape s = ShapeOf(w);
  return static_cast<double>(s.planes) * (s.h * s.w + s.p * s.q) *
         ElementBytes(w);
}

std::vector<Feature> Pool2dTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const PoolKnobs k = ToKnobs(config);
  const PoolShape s = ShapeOf(w);
  const double groups_q = CeilDiv(s.q, k.qwg());
  const double groups_p = CeilDiv(s.p, k.pwg());
  const double groups_c = CeilDiv(s.planes, k.cwg);
  const double groups = groups_q * groups_p * groups_c;
  const double wg = static_cast<double>(k.work_group_size());
  // Outputs computed (whole work-group tiles) over outputs stored.
  const double useful = static_cast<double>(s.planes) * s.p * s.q;
  const double padding =
      groups_q * k.qwg() * groups_p * k.pwg() * groups_c * k.cwg / useful;
  const double local_bytes = static_cast<double>(LocalMemBytes(k, s));
  // Global loads per output: R*S window reads without a tile; with one,
  // the tile's elements over the work-group's outputs (halo included).
  const double reads_per_output =
      k.lt == 1 ? static_cast<double>(TileRows(k, s) * TileCols(k, s)) /
                      (k.pwg() * k.qwg())
                : static_cast<double>(s.r * s.s);
  // How often windows read each input element: R*S / (SH*SW) (> 1 when
  // windows overlap, which is what a local tile can save).
  const double window_overlap =
      static_cast<double>(s.r * s.s) / static_cast<double>(s.sh * s.sw);
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = local_bytes},
      limits,
      // Outputs per work-item: PWI x QWI per plane, CWG/WGC planes.
      {"log2_outputs_per_work_item",
       std::log2(static_cast<double>(k.pwi * k.qwi * (k.cwg / k.wgc)))},
      {{"vector_width", static_cast<double>(k.vw)}},
      {{"padding_factor", padding},
       {"global_reads_per_output", reads_per_output},
       {"window_overlap", window_overlap}});
}

}  // namespace tunefleet::templates
