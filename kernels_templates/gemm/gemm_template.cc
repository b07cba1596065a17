#include "kernels_templates/gemm/gemm_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of GemmKnobs' fields.
std::vector<Knob> GemmKnobList() {
  return {
      {"MWG", {16, 32, 64, 128}, true},
      {"NWG", {16, 32, 64, 128}, true},
      {"KWG", {8, 16, 32}, true},
      {"MWI", {1, 2, 4, 8}, true},
      {"NWI", {1, 2, 4, 8}, true},
      {"VW", {1, 2, 4, 8}, true},
      {"SA", {0, 1}, false},
      {"SB", {0, 1}, false},
      {"KUNROLL", {1, 2, 4, 8}, true},
  };
}

tunefleet_gemm::GemmDeviceLimits ToGemmLimits(const DeviceLimits& d) {
  return {d.max_work_group_size, d.max_work_item_sizes[0],
          d.max_work_item_sizes[1], d.local_mem_bytes};
}

}  // namespace

GemmTemplate::GemmTemplate(Variant variant)
    : variant_(variant),
      knobs_(GemmKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), GemmSource())),
      reference_source_(absl::StrCat(KernelPreamble(), GemmReferenceSource())) {
}

absl::string_view GemmTemplate::name() const {
  switch (variant_) {
    case Variant::kDense:
      return "dense_gemm";
    case Variant::kConv1x1:
      return "conv2d_1x1_gemm";
    default:
      return "gemm_tiled";
  }
}

absl::string_view GemmTemplate::op() const {
  switch (variant_) {
    case Variant::kDense:
      return "dense";
    case Variant::kConv1x1:
      return "conv2d";
    default:
      return "gemm";
  }
}

bool GemmTemplate::Accepts(const Workload& w) const {
  if (w.op() != op()) return false;
  if (variant_ != Variant::kConv1x1) return true;
  for (const char* one : {"R", "S", "SH", "SW", "DH", "DW", "G"}) {
    if (w.dim(one) != 1) return false;
  }
  return w.dim("PH") == 0 && w.dim("PW") == 0;
}

tunefleet_gemm::GemmKnobs GemmTemplate::ToGemmKnobs(const KnobValues& c) {
  tunefleet_gemm::GemmKnobs k;
  k.mwg = c[0];
  k.nwg = c[1];
  k.kwg = c[2];
  k.mwi = c[3];
  k.nwi = c[4];
  k.vw = c[5];
  k.sa = c[6];
  k.sb = c[7];
  k.kunroll = c[8];
  return k;
}

GemmTemplate::Problem GemmTemplate::ProblemOf(const Workload& w) const {
  if (variant_ == Variant::kConv1x1) {
    return {w.dim("K"), w.dim("H") * w.dim("W"), w.dim("C"), w.dim("N")};
  }
  return {w.dim("M"), w.dim("N"), w.dim("K"), 1};
}

absl::Status GemmTemplate::CheckWorkload(const Workload& w,
                                         const DeviceLimits& limits) const {
  if (!Accepts(w)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template ", name(), " does not run ", w.Canonical(),
        variant_ == Variant::kConv1x1
            ? " (it takes 1x1 kernels, stride 1, no padding, groups 1)"
            : ""));
  }
  const Problem p = ProblemOf(w);
  if (p.n > kMaxDim || p.m * p.n > int64_t{1} << 40) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.Canonical(), " is too large for template ", name()));
  }
  return CheckBuffersFit(*this, w, limits);
}

absl::Status GemmTemplate::CheckConfig(const KnobValues& config,
                                       const Workload& w,
                                       const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  return ConfigStatus(
      *this, config,
      tunefleet_gemm::GemmCheck(ToGemmKnobs(config), ToGemmLimits(limits)));
}

std::vector<BufferDesc> GemmTemplate::Buffers(const Workload& w) const {
  const std::string& dtype = w.dtype();
  const Problem p = ProblemOf(w);
  const uint64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
  switch (variant_) {
    case Variant::kGemm:
      return {{"A", m * k, false, 1, dtype},
              {"B", k * n, false, 2, dtype},
              {"C", m * n, true, 0, dtype}};
    case Variant::kDense: {
      std::vector<BufferDesc> b = {{"input", m * k, false, 1, dtype},
                                   {"weight", k * n, false, 2, dtype},
                                   {"output", m * n, true, 0, dtype}};
      AddEpilogueBuffers(p.n, &b);
      return b;
    }
    case Variant::kConv1x1: {
      std::vector<BufferDesc> b = {{"input", batch * k * n, false, 1, dtype},
                                   {"weight", m * k, false, 2, dtype},
                                   {"output", batch * m * n, true, 0, dtype}};
      AddEpilogueBuffers(p.m, &b);
      return b;
    }
  }
  return {};
}

std::vector<ArgDesc> GemmTemplate::Args(const Workload& w) const {
  const Problem p = ProblemOf(w);
  std::vector<ArgDesc> args = {ArgDesc::Int(p.m), ArgDesc::Int(p.n),
                               ArgDesc::Int(p.k)};
  switch (variant_) {
    case Variant::kGemm:
      for (const char* b : {"A", "B", "C"}) args.push_back(ArgDesc::Buffer(b));
      return args;
    case Variant::kDense:
      for (const char* b : {"input", "weight", "output"}) {
        args.push_back(ArgDesc::Buffer(b));
      }
      break;
    case Variant::kConv1x1:
      for (const char* b : {"weight", "input", "output"}) {
        args.push_back(ArgDesc::Buffer(b));
      }
      break;
  }
  AddEpilogueArgs(w, &args);
  return args;
}

LaunchDesc GemmTemplate::Launch(const KnobValues& config,
                                const Workload& w) const {
  const Problem p = ProblemOf(w);
  const tunefleet_gemm::GemmLaunch g =
      tunefleet_gemm::GemmGeometry(ToGemmKnobs(config), p.m, p.n);
  std::string options = absl::StrCat(g.build_options, PreambleDefines(w));
  if (variant_ == Variant::kGemm) {
    return LaunchDesc{source_,
                      "gemm",
                      options,
                      {g.global[0], g.global[1]},
                      {g.local[0], g.local[1]},
                      Args(w)};
  }
  absl::StrAppend(&options,
                  " -DEPILOGUE_AXIS=", variant_ == Variant::kConv1x1 ? 1 : 2);
  return LaunchDesc{source_,
                    "gemm_fused",
                    options,
                    {g.global[0], g.global[1], static_cast<uint64_t>(p.batch)},
                    {g.local[0], g.local[1], 1},
                    Args(w)};
}

LaunchDesc GemmTemplate::ReferenceLaunch(const Workload& w) const {
  const Problem p = ProblemOf(w);
  const uint64_t n = p.n, m = p.m;
  std::string options = PreambleDefines(w);
  if (variant_ == Variant::kGemm) {
    return LaunchDesc{
        reference_source_, "gemm_reference", options, {n, m}, {}, Args(w)};
  }
  absl::StrAppend(&options,
                  " -DEPILOGUE_AXIS=", variant_ == Variant::kConv1x1 ? 1 : 2);
  return LaunchDesc{reference_source_,
                    "gemm_reference_fused",
                    options,
                    {n, m, static_cast<uint64_t>(p.batch)},
                    {},
                    Args(w)};
}

std::vector<Feature> GemmTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const tunefleet_gemm::GemmKnobs k = ToGemmKnobs(config);
  const Problem p = ProblemOf(w);
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n);
  const double groups_m = std::ceil(m / k.mwg), groups_n = std::ceil(n / k.nwg);
  const double groups = groups_m * groups_n * static_cast<double>(p.batch);
  const double wg = static_cast<double>(tunefleet_gemm::GemmWorkGroupSize(k));
  // FLOPs per byte a work-group loads from global memory per K step: an
  // MWG x NWG tile of C reads MWG + NWG floats for 2*MWG*NWG FLOPs (the
  // classic tiling bound; Volkov & Demmel, SC'08).
  const double intensity =
      2.0 * k.mwg * k.nwg / (ElementBytes(w) * (k.mwg + k.nwg));
  // Work done on padding: computed elements over useful ones.
  const double padding =
      groups_m * k.mwg * groups_n * k.nwg / std::max(m * n, 1.0);
  const double local_bytes =
      static_cast<double>(tunefleet_gemm::GemmLocalMemBytes(k));
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = local_bytes},
      limits,
      {"log2_register_tile", std::log2(static_cast<double>(k.mwi * k.nwi))},
      {{"arithmetic_intensity", intensity},
       {"vector_width", static_cast<double>(k.vw)}},
      {{"padding_factor", padding}});
}

double GemmTemplate::Bytes(const Workload& w) const {
  const Problem p = ProblemOf(w);
  const double m = p.m, n = p.n, k = p.k, batch = p.batch;
  return (m * k + batch * (k * n + m * n)) * ElementBytes(w);
}

double GemmTemplate::Flops(const Workload& w) const {
  const Problem p = ProblemOf(w);
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
         static_cast<double>(p.k) * static_cast<double>(p.batch);
}

}  // namespace tunefleet::templates
