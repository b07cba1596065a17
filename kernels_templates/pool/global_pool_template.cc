#include "kernels_templates/pool/global_pool_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

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

// Smallest power of two >= n (n >= 1).
int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

uint64_t CeilDiv(int64_t a, int64_t b) {
  return static_cast<uint64_t>((a + b - 1) / b);
}

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

// " -DPOOL_MAX=<0|1>" and the dtype defines.
std::string ModeDefines(const Workload& w) {
  return absl::StrCat(" -DPOOL_MAX=", w.attr("mode") == "avg" ? 0 : 1,
                      PreambleDefines(w));
}

}  // namespace

GlobalPoolTemplate::GlobalPoolTemplate()
    : knobs_(GlobalPoolKnobList()),
      source_(absl::StrCat(KernelPreamble(), GlobalPoolSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), GlobalPoolReferenceSource())) {}

absl::Status GlobalPoolTemplate::CheckWorkload(
    const Workload& w, const DeviceLimits& limits) const {
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  for (const BufferDesc& b : Buffers(w)) {
    const uint64_t bytes = b.elements * ElementBytes(w);
    if (limits.max_mem_alloc_bytes != 0 && bytes > limits.max_mem_alloc_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.name, " of ", w.Canonical(), " needs ",
                       bytes, " bytes, over the device's max allocation of ",
                       limits.max_mem_alloc_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status GlobalPoolTemplate::CheckConfig(const KnobValues& config,
                                             const Workload& w,
                                             const DeviceLimits& limits) const {
  if (config.size() != knobs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("config has ", config.size(),
                                                   " values, template has ",
                                                   knobs().size(), " knobs"));
  }
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  const ReduceKnobs k = ToKnobs(config);
  const char* why = nullptr;
  if (static_cast<uint64_t>(k.wpc * k.cpg) > limits.max_work_group_size) {
    why = "work-group size WPC*CPG exceeds the device's maximum";
  } else if (static_cast<uint64_t>(k.wpc) > limits.max_work_item_sizes[0] ||
             static_cast<uint64_t>(k.cpg) > limits.max_work_item_sizes[1]) {
    why = "work-group dimension exceeds the device's work-item sizes";
  } else if (LocalMemBytes(k) > limits.local_mem_bytes) {
    why = "reduction array exceeds the device's local memory";
    // Pruning: a first step wider than the plane, or more planes per
    // work-group than there are planes (rounded up to powers of two), only
    // adds idle work-items.
  } else if (k.wpc * k.vw * k.unroll > NextPow2(PlaneSize(w))) {
    why = "WPC*VW*UNROLL exceeds H*W rounded up to a power of two";
  } else if (k.cpg > NextPow2(Planes(w))) {
    why = "CPG exceeds N*C rounded up to a power of two";
  }
  if (why != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(ConfigString(config), ": ", why));
  }
  return absl::OkStatus();
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
  return LaunchDesc{source_,
                    "global_pool",
                    absl::StrCat("-DWPC=", k.wpc, " -DCPG=", k.cpg, " -DVW=",
                                 k.vw, " -DUNROLL=", k.unroll, ModeDefines(w)),
                    {wpc, CeilDiv(Planes(w), k.cpg) * cpg},
                    {wpc, cpg},
                    ReduceArgs(w)};
}

LaunchDesc GlobalPoolTemplate::ReferenceLaunch(const Workload& w) const {
  return LaunchDesc{reference_source_,
                    "global_pool_reference",
                    ModeDefines(w).substr(1),
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

double GlobalPoolTemplate::Tolerance(const Workload& w) const {
  return ToleranceFor(w);
}

std::vector<Feature> GlobalPoolTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const ReduceKnobs k = ToKnobs(config);
  const double planes = static_cast<double>(Planes(w));
  const double hw = static_cast<double>(PlaneSize(w));
  const double groups = static_cast<double>(CeilDiv(Planes(w), k.cpg));
  const double wg = static_cast<double>(k.wpc * k.cpg);
  const double cus = std::max<double>(limits.compute_units, 1);
  // Fraction of the last wave of work-groups that has work: 1 when the
  // groups fill every compute unit in every wave.
  const double waves = std::ceil(groups / cus);
  const double wave_efficiency = groups / (waves * cus);
  const double local_bytes = static_cast<double>(LocalMemBytes(k));
  // Elements each work-item reduces before the tree: ceil(H*W / WPC).
  const double per_item = std::ceil(hw / static_cast<double>(k.wpc));
  // Work-items with no whole vector to load: WPC - H*W/VW when positive,
  // as a fraction of WPC.
  const double idle = std::max(0.0, k.wpc - std::floor(hw / k.vw)) / k.wpc;
  return {
      {"log2_work_group_size", std::log2(wg)},
      {"log2_work_groups", std::log2(groups)},
      {"log2_work_items", std::log2(groups * wg)},
      {"log2_elements_per_work_item", std::log2(per_item)},
      {"log2_local_mem_bytes", std::log2(1.0 + local_bytes)},
      {"local_mem_fraction",
       limits.local_mem_bytes ? local_bytes / limits.local_mem_bytes : 0.0},
      {"vector_width", static_cast<double>(k.vw)},
      {"groups_per_compute_unit", groups / cus},
      {"wave_efficiency", wave_efficiency},
      // Planes computed (whole work-groups) over planes stored.
      {"padding_factor", groups * k.cpg / planes},
      {"idle_work_item_fraction", idle},
  };
}

}  // namespace tunefleet::templates
