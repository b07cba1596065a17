#include "kernels_templates/softmax/softmax_template.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

namespace tunefleet::templates {
namespace {

// Knob order is the order of SoftmaxKnobs' fields.
std::vector<Knob> SoftmaxKnobList() {
  return {
      {"WPR", {1, 2, 4, 8, 16, 32, 64, 128, 256}, true},
      {"RPG", {1, 2, 4, 8, 16}, true},
      {"VW", {1, 2, 4, 8}, true},
      {"EPW", {1, 2, 4, 8}, true},
  };
}

// Most floats a work-item holds per pass (VW*EPW).
constexpr int64_t kMaxRegisterValues = 32;
// Largest D: columns of a pass (< D + WPR*VW*EPW) must fit 32-bit ints.
constexpr int64_t kMaxRowLength = int64_t{1} << 30;

struct SoftmaxKnobs {
  int64_t wpr, rpg, vw, epw;
  // Elements one pass of a row covers (softmax.cl: CHUNK).
  int64_t chunk() const { return wpr * vw * epw; }
};

SoftmaxKnobs ToKnobs(const KnobValues& c) { return {c[0], c[1], c[2], c[3]}; }

// Bytes of the kernel's red_m and red_s arrays (none for WPR=1).
uint64_t LocalMemBytes(const SoftmaxKnobs& k) {
  return k.wpr > 1 ? static_cast<uint64_t>(2 * k.wpr * k.rpg) * sizeof(float)
                   : 0;
}

absl::Status CheckShape(const Workload& w) {
  if (w.op() != "softmax") {
    return absl::InvalidArgumentError(
        absl::StrCat("template softmax_rows does not run ", w.Canonical()));
  }
  if (w.dim("D") > kMaxRowLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        w.Canonical(), " is too large for template softmax_rows (D > 2^30)"));
  }
  return absl::OkStatus();
}

std::vector<ArgDesc> SoftmaxArgs(const Workload& w) {
  return {ArgDesc::Int(w.dim("N")), ArgDesc::Int(w.dim("D")),
          ArgDesc::Buffer("input"), ArgDesc::Buffer("output")};
}

}  // namespace

SoftmaxTemplate::SoftmaxTemplate()
    : knobs_(SoftmaxKnobList()),
      source_(absl::StrCat(VectorKernelPreamble(), SoftmaxSource())),
      reference_source_(
          absl::StrCat(KernelPreamble(), SoftmaxReferenceSource())) {}

absl::Status SoftmaxTemplate::CheckWorkload(const Workload& w,
                                            const DeviceLimits& limits) const {
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  return CheckBuffersFit(*this, w, limits);
}

absl::Status SoftmaxTemplate::CheckConfig(const KnobValues& config,
                                          const Workload& w,
                                          const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  if (absl::Status s = CheckShape(w); !s.ok()) return s;
  const SoftmaxKnobs k = ToKnobs(config);
  if (k.vw * k.epw > kMaxRegisterValues) {
    return ConfigStatus(*this, config, "VW*EPW > 32 values per work-item");
  }
  if (absl::Status s = CheckWorkGroup(
          *this, config,
          {.local = {k.wpr, k.rpg},
           .local_mem_bytes = LocalMemBytes(k),
           .size_reason =
               "work-group size WPR*RPG exceeds the device's maximum",
           .local_mem_reason =
               "reduction arrays exceed the device's local memory"},
          limits);
      !s.ok()) {
    return s;
  }
  // Pruning: a pass wider than the row, or more rows per work-group than
  // there are rows (rounded up to powers of two), only adds idle lanes.
  const char* why = nullptr;
  if (k.chunk() > NextPow2(w.dim("D"))) {
    why = "WPR*VW*EPW exceeds D rounded up to a power of two";
  } else if (k.rpg > NextPow2(w.dim("N"))) {
    why = "RPG exceeds N rounded up to a power of two";
  }
  return ConfigStatus(*this, config, why);
}

std::vector<BufferDesc> SoftmaxTemplate::Buffers(const Workload& w) const {
  const uint64_t elements = static_cast<uint64_t>(w.dim("N") * w.dim("D"));
  return {{"input", elements, false, 1, w.dtype()},
          {"output", elements, true, 0, w.dtype()}};
}

LaunchDesc SoftmaxTemplate::Launch(const KnobValues& config,
                                   const Workload& w) const {
  const SoftmaxKnobs k = ToKnobs(config);
  const uint64_t wpr = k.wpr, rpg = k.rpg;
  return LaunchDesc{
      source_,
      "softmax",
      absl::StrCat("-DWPR=", k.wpr, " -DRPG=", k.rpg, " -DVW=", k.vw, " -DEPW=",
                   k.epw, " -DSINGLE_PASS=", w.dim("D") <= k.chunk() ? 1 : 0,
                   PreambleDefines(w)),
      {wpr, CeilDiv(w.dim("N"), k.rpg) * rpg},
      {wpr, rpg},
      SoftmaxArgs(w)};
}

LaunchDesc SoftmaxTemplate::ReferenceLaunch(const Workload& w) const {
  return LaunchDesc{reference_source_,
                    "softmax_reference",
                    PreambleDefines(w).substr(1),
                    {static_cast<uint64_t>(w.dim("N"))},
                    {},
                    SoftmaxArgs(w)};
}

double SoftmaxTemplate::Flops(const Workload& w) const {
  return 4.0 * static_cast<double>(w.dim("N")) *
         static_cast<double>(w.dim("D"));
}

double SoftmaxTemplate::Bytes(const Workload& w) const {
  return 2.0 * static_cast<double>(w.dim("N")) *
         static_cast<double>(w.dim("D")) * ElementBytes(w);
}

std::vector<Feature> SoftmaxTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  const SoftmaxKnobs k = ToKnobs(config);
  const double n = static_cast<double>(w.dim("N"));
  const double d = static_cast<double>(w.dim("D"));
  const double groups = static_cast<double>(CeilDiv(w.dim("N"), k.rpg));
  const double wg = static_cast<double>(k.wpr * k.rpg);
  const double local_bytes = static_cast<double>(LocalMemBytes(k));
  const double chunk = static_cast<double>(k.chunk());
  const double passes = std::ceil(d / chunk);
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = local_bytes},
      limits,
      // Elements of a row each work-item handles: ceil(D / WPR).
      {"log2_elements_per_work_item", std::log2(std::ceil(d / k.wpr))},
      {{"vector_width", static_cast<double>(k.vw)}},
      {// Rows computed (whole work-groups) over rows stored.
       {"padding_factor", groups * k.rpg / n},
       // Lanes the passes cover over the row's elements: passes*CHUNK / D.
       {"lane_padding_factor", passes * chunk / d},
       // Times the input is read: 1 when the row fits one pass (kept in
       // registers), else 2 (statistics pass, output pass).
       {"input_reads", passes == 1 ? 1.0 : 2.0}});
}

}  // namespace tunefleet::templates
