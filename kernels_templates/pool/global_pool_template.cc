#include "kernels_templates/pool/global_pool_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"
#include "kernels_templates/pool/pool_mode.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of ReduceKnobs' fields.
std::vector<Knob> GlobalPoolKnobList() {
  return {
      {"WPC", {1, 2, 4, 8, 16, 32, 64, 128, 256}, true},
      {"CPG", {1, 2, 4, 8, 16, 32}, true},
      {"VW", {1, 2, 4, 8}, true},
      {"UNROLL", {1, 2, 4}, true},
  };
}

struct ReduceKnobs {
  int64_t wpc, cpg, vw, unroll;
};

ReduceKnobs ToKnobs(const KnobValues& c) { return {c[0], c[1], c[2], c[3]}; }

int64_t Planes(const Workload& w) { return w.dim("N") * w.dim("C"); }
int64_t PlaneSize(const Workload& w) { return w.dim("H") * w.dim("W"); }

// Bytes of the kernel's `partial` array (none for one work-item a plane).
uint64_t LocalMemBytes(const ReduceKnobs& k) {
  return k.wpc > 1 ? static_cast<uint64_t>(k.wpc * k.cpg) * sizeof(float) : 0;
}

absl::Status CheckShape(const Workload& w) {
  if (w.op() != "global_pool") {
    return absl::InvalidArgumentError(absl::StrCat(
        "template global_pool_reduce does not run ", w.Canonical()));
  }
  if (Planes(w) > kMaxDim || PlaneSize(w) > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.Canonical(),
                     " is too large for template global_pool_reduce"
                     " (N*C and H*W must fit 32-bit ints)"));
  }
  return absl::OkStatus();
}

std::vector<ArgDesc> ReduceArgs(const Workload& w) {
  return {ArgDesc::Int(w.dim("N")), ArgDesc::Int(w.dim("C")),
          ArgDesc::Int(w.dim("H")), ArgDesc::Int(w.dim("W")),
          ArgDesc::Buffer("input"), ArgDesc::Buffer("output")};
}

}  // namespace

GlobalPoolTemplate::GlobalPoolTemplate()
    : knobs_(GlobalPoolKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), PoolModeSource(),
                           GlobalPoolSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), GlobalPoolReferenceSource())) {}

absl::Status GlobalPoolTemplate::CheckWorkload(
    const Workload& w, const DeviceLimits& limits) const {
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  return CheckBuffersFit(*this, w, limits);
}

absl::Status GlobalPoolTemplate::CheckConfig(const KnobValues& config,
                                             const Workload& w,
                                             const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  const ReduceKnobs k = ToKnobs(config);
  if (absl::Status s = CheckWorkGroup(
          *this, config,
          {.local = {k.wpc, k.cpg},
           .local_mem_bytes = LocalMemBytes(k),
           .size_reason =
               "work-group size WPC*CPG exceeds the device's maximum",
           .local_mem_reason =
               "reduction array exceeds the device's local memory"},
          limits);
      !s.ok()) {
    return s;
  }
  // Pruning: a first step wider than the plane, or more planes per
  // work-group than there are planes (rounded up to powers of two), only
  // adds idle work-items.
  const char* why = nullptr;
  if (k.wpc * k.vw * k.unroll > NextPow2(PlaneSize(w))) {
    why = "WPC*VW*UNROLL exceeds H*W rounded up to a power of two";
  } else if (k.cpg > NextPow2(Planes(w))) {
    why = "CPG exceeds N*C rounded up to a power of two";
  }
  return ConfigStatus(*this, config, why);
}

std::vector<BufferDesc> GlobalPoolTemplate::Buffers(const Workload& w) const {
  const uint64_t planes = static_cast<uint64_t>(Planes(w));
  return {{"input", planes * PlaneSize(w), false, 1, w.dtype()},
          {"output", planes, true, 0, w.dtype()}};
}

LaunchDesc GlobalPoolTemplate::Launch(const KnobValues& config,
                                      const Workload& w) const {
  const ReduceKnobs k = ToKnobs(config);
  const uint64_t wpc = k.wpc, cpg = k.cpg;
  return LaunchDesc{
      source_,
      "global_pool",
      absl::StrCat("-DWPC=", k.wpc, " -DCPG=", k.cpg, " -DVW=", k.vw,
                   " -DUNROLL=", k.unroll, PoolModeDefines(w)),
      {wpc, CeilDiv(Planes(w), k.cpg) * cpg},
      {wpc, cpg},
      ReduceArgs(w)};
}

LaunchDesc GlobalPoolTemplate::ReferenceLaunch(const Workload& w) const {
  return LaunchDesc{reference_source_,
                    "global_pool_reference",
                    PoolModeDefines(w).substr(1),
                    {static_cast<uint64_t>(Planes(w))},
                    {},
                    ReduceArgs(w)};
}

double GlobalPoolTemplate::Flops(const Workload& w) const {
  return static_cast<double>(Planes(w)) * static_cast<double>(PlaneSize(w));
}

double GlobalPoolTemplate::Bytes(const Workload& w) const {
  return static_cast<double>(Planes(w)) * (PlaneSize(w) + 1.0) *
         ElementBytes(w);
}

std::vector<Feature> GlobalPoolTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const ReduceKnobs k = ToKnobs(config);
  const double planes = static_cast<double>(Planes(w));
  const double hw = static_cast<double>(PlaneSize(w));
  const double groups = static_cast<double>(CeilDiv(Planes(w), k.cpg));
  const double wg = static_cast<double>(k.wpc * k.cpg);
  const double local_bytes = static_cast<double>(LocalMemBytes(k));
  // Elements each work-item reduces before the tree: ceil(H*W / WPC).
  const double per_item = std::ceil(hw / static_cast<double>(k.wpc));
  // Work-items with no whole vector to load: WPC - H*W/VW when positive,
  // as a fraction of WPC.
  const double idle = std::max(0.0, k.wpc - std::floor(hw / k.vw)) / k.wpc;
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = local_bytes},
      limits, {"log2_elements_per_work_item", std::log2(per_item)},
      {{"vector_width", static_cast<double>(k.vw)}},
      // Planes computed (whole work-groups) over planes stored.
      {{"padding_factor", groups * k.cpg / planes},
       {"idle_work_item_fraction", idle}});
}

}  // namespace tunefleet::templates
