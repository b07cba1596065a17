#include "kernels_templates/gemm/gemm_template.h"

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

double GemmTemplate::Flops(const Workload& w) const {
  return 2.0 * static_cast<double>(w.dim("M")) *
         static_cast<double>(w.dim("N")) * static_cast<double>(w.dim("K"));
}

}  // namespace tunefleet::templates
