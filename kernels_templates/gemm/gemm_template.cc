#include "kernels_templates/gemm/gemm_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

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

std::vector<ArgDesc> GemmArgs(const Workload& w) {
  return {ArgDesc::Int(w.dim("M")), ArgDesc::Int(w.dim("N")),
          ArgDesc::Int(w.dim("K")), ArgDesc::Buffer("A"),
          ArgDesc::Buffer("B"),     ArgDesc::Buffer("C")};
}

}  // namespace

GemmTemplate::GemmTemplate() : knobs_(GemmKnobList()) {}

absl::string_view GemmTemplate::source() const { return GemmSource(); }

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

absl::Status GemmTemplate::CheckWorkload(const Workload& w,
                                         const DeviceLimits& limits) const {
  if (w.op() != "gemm") {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", name(), " runs gemm, not ", w.op()));
  }
  for (const BufferDesc& b : Buffers(w)) {
    const uint64_t bytes = b.elements * sizeof(float);
    if (limits.max_mem_alloc_bytes != 0 && bytes > limits.max_mem_alloc_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.name, " of ", w.Canonical(), " needs ",
                       bytes, " bytes, over the device's max allocation of ",
                       limits.max_mem_alloc_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status GemmTemplate::CheckConfig(const KnobValues& config,
                                       const Workload& w,
                                       const DeviceLimits& limits) const {
  if (config.size() != knobs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("config has ", config.size(),
                                                   " values, template has ",
                                                   knobs().size(), " knobs"));
  }
  const char* why =
      tunefleet_gemm::GemmCheck(ToGemmKnobs(config), ToGemmLimits(limits));
  if (why != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(ConfigString(config), ": ", why));
  }
  return absl::OkStatus();
}

std::vector<BufferDesc> GemmTemplate::Buffers(const Workload& w) const {
  const uint64_t m = w.dim("M"), n = w.dim("N"), k = w.dim("K");
  return {
      {"A", m * k, false, 1}, {"B", k * n, false, 2}, {"C", m * n, true, 0}};
}

LaunchDesc GemmTemplate::Launch(const KnobValues& config,
                                const Workload& w) const {
  const tunefleet_gemm::GemmLaunch g =
      tunefleet_gemm::GemmGeometry(ToGemmKnobs(config), w.dim("M"), w.dim("N"));
  return LaunchDesc{GemmSource(),
                    "gemm",
                    g.build_options,
                    {g.global[0], g.global[1]},
                    {g.local[0], g.local[1]},
                    GemmArgs(w)};
}

LaunchDesc GemmTemplate::ReferenceLaunch(const Workload& w) const {
  return LaunchDesc{
      GemmReferenceSource(),
      "gemm_reference",
      "",
      {static_cast<uint64_t>(w.dim("N")), static_cast<uint64_t>(w.dim("M"))},
      {},
      GemmArgs(w)};
}

std::vector<Feature> GemmTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const tunefleet_gemm::GemmKnobs k = ToGemmKnobs(config);
  const double m = w.dim("M"), n = w.dim("N");
  const double groups_m = std::ceil(m / k.mwg), groups_n = std::ceil(n / k.nwg);
  const double groups = groups_m * groups_n;
  const double wg = static_cast<double>(tunefleet_gemm::GemmWorkGroupSize(k));
  const double cus = std::max<double>(limits.compute_units, 1);
  // Fraction of the last wave of work-groups that has work: 1 when the
  // groups fill every compute unit in every wave.
  const double waves = std::ceil(groups / cus);
  const double wave_efficiency = groups / (waves * cus);
  // FLOPs per byte a work-group loads from global memory per K step: an
  // MWG x NWG tile of C reads MWG + NWG floats for 2*MWG*NWG FLOPs (the
  // classic tiling bound; Volkov & Demmel, SC'08).
  const double intensity = 2.0 * k.mwg * k.nwg / (4.0 * (k.mwg + k.nwg));
  // Work done on padding: computed elements over useful ones.
  const double padding =
      groups_m * k.mwg * groups_n * k.nwg / std::max(m * n, 1.0);
  const double local_bytes =
      static_cast<double>(tunefleet_gemm::GemmLocalMemBytes(k));
  return {
      {"log2_work_group_size", std::log2(wg)},
      {"log2_work_groups", std::log2(groups)},
      {"log2_work_items", std::log2(groups * wg)},
      {"log2_register_tile", std::log2(static_cast<double>(k.mwi * k.nwi))},
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

double GemmTemplate::Flops(const Workload& w) const {
  return 2.0 * static_cast<double>(w.dim("M")) *
         static_cast<double>(w.dim("N")) * static_cast<double>(w.dim("K"));
}

}  // namespace tunefleet::templates
