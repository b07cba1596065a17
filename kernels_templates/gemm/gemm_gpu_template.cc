#include "kernels_templates/gemm/gemm_gpu_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"
#include "kernels_templates/gemm/gemm_template.h"

namespace tunefleet::templates {
namespace {

// Knob order: the indices below.
enum { kBM, kBN, kBK, kTM, kTN, kLOADV, kDB, kSTRN, kWTILE };

// Most work-items a work-group may have: TM x TN register tiles plus the
// fetch registers need more than 128 registers a work-item, and a
// 64K-register SM (NVIDIA since Kepler) then fits at most 256 of them
// (CL_KERNEL_WORK_GROUP_SIZE reports 256 on an H200 for such kernels).
constexpr int64_t kMaxWorkItems = 256;
// Most accumulators a work-item may hold: 16 x 16 = 256 floats alone exceed
// the 255 registers an NVIDIA thread can address (PTX ISA, registers), and
// spill; 16 x 8 leaves room for the operands and addresses.
constexpr int64_t kMaxRegisterTile = 128;

std::vector<Knob> GemmGpuKnobList() {
  return {
      {"BM", {32, 64, 128, 256}, true},
      {"BN", {32, 64, 128, 256}, true},
      {"BK", {8, 16, 32}, true},
      {"TM", {2, 4, 8, 16}, true},
      {"TN", {2, 4, 8, 16}, true},
      {"LOADV", {1, 2, 4}, true},
      {"DB", {0, 1}, false},
      {"STRN", {0, 1}, false},
      {"WTILE", {0, 1}, false},
  };
}

struct Dims {
  int64_t m, n, k;
};
Dims DimsOf(const Workload& w) { return {w.dim("M"), w.dim("N"), w.dim("K")}; }

uint64_t LocalBytes(const KnobValues& c) {
  return static_cast<uint64_t>((c[kDB] + 1) * c[kBK] * (c[kBM] + 4 + c[kBN]) *
                               4);
}

// The first constraint `c` violates for `w`, or null.
const char* Violation(const KnobValues& c, const Workload& w) {
  const int64_t bm = c[kBM], bn = c[kBN], bk = c[kBK], tm = c[kTM], tn = c[kTN],
                v = c[kLOADV];
  if (bm % tm != 0 || bn % tn != 0) return "TM must divide BM, TN divide BN";
  if (tm * tn > kMaxRegisterTile) {
    return "a register tile of more than 128 accumulators";
  }
  const int64_t threads = (bm / tm) * (bn / tn);
  if (threads > kMaxWorkItems) return "more than 256 work-items";
  if (c[kSTRN] == 1 && tn % 4 != 0) return "STRN needs TN % 4 == 0";
  if (c[kWTILE] == 1 && ((bn / tn) % 8 != 0 || (bm / tm) % 4 != 0)) {
    return "WTILE needs BN/TN % 8 == 0 and BM/TM % 4 == 0";
  }
  if (bk % v != 0 || bn % v != 0) return "LOADV must divide BK and BN";
  if ((bm * bk / v) % threads != 0 || bm * bk / v < threads) {
    return "the A tile must split evenly into LOADV-vectors over the "
           "work-group";
  }
  if ((bk * bn / v) % threads != 0 || bk * bn / v < threads) {
    return "the B tile must split evenly into LOADV-vectors over the "
           "work-group";
  }
  const Dims d = DimsOf(w);
  if (d.n % v != 0 || d.k % v != 0) return "LOADV must divide N and K";
  return nullptr;
}

}  // namespace

GemmGpuTemplate::GemmGpuTemplate()
    : knobs_(GemmGpuKnobList()),
      source_(GemmGpuSource()),
      reference_source_(absl::StrCat(KernelPreamble(), GemmReferenceSource())) {
}

bool GemmGpuTemplate::Accepts(const Workload& w) const {
  return w.op() == "gemm" && w.dtype() == "fp32";
}

absl::Status GemmGpuTemplate::CheckWorkload(const Workload& w,
                                            const DeviceLimits& limits) const {
  if (!Accepts(w)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template gemm_gpu runs fp32 gemm workloads, not ", w.Canonical()));
  }
  const Dims d = DimsOf(w);
  if (d.m * d.n > int64_t{1} << 40 || d.k > int64_t{1} << 30) {
    return absl::InvalidArgumentError(
        absl::StrCat(w.Canonical(), " is too large for template gemm_gpu"));
  }
  return CheckBuffersFit(*this, w, limits);
}

absl::Status GemmGpuTemplate::CheckConfig(const KnobValues& config,
                                          const Workload& w,
                                          const DeviceLimits& limits) const {
  if (absl::Status s = CheckConfigSize(*this, config); !s.ok()) return s;
  if (const char* why = Violation(config, w)) {
    return ConfigStatus(*this, config, why);
  }
  return CheckWorkGroup(
      *this, config,
      {.local = {config[kBN] / config[kTN], config[kBM] / config[kTM]},
       .local_mem_bytes = LocalBytes(config)},
      limits);
}

std::vector<BufferDesc> GemmGpuTemplate::Buffers(const Workload& w) const {
  const Dims d = DimsOf(w);
  const uint64_t m = d.m, n = d.n, k = d.k;
  return {{"A", m * k, false, 1, "fp32"},
          {"B", k * n, false, 2, "fp32"},
          {"C", m * n, true, 0, "fp32"}};
}

namespace {

std::vector<ArgDesc> GemmArgs(const Workload& w) {
  const Dims d = DimsOf(w);
  return {ArgDesc::Int(d.m),    ArgDesc::Int(d.n),    ArgDesc::Int(d.k),
          ArgDesc::Buffer("A"), ArgDesc::Buffer("B"), ArgDesc::Buffer("C")};
}

}  // namespace

LaunchDesc GemmGpuTemplate::Launch(const KnobValues& c,
                                   const Workload& w) const {
  const Dims d = DimsOf(w);
  const uint64_t tx = c[kBN] / c[kTN], ty = c[kBM] / c[kTM];
  std::string options;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    absl::StrAppend(&options, i ? " " : "", "-D", knobs_[i].name, "=", c[i]);
  }
  absl::StrAppend(&options, " -DEDGE_M=", d.m % c[kBM] != 0,
                  " -DEDGE_N=", d.n % c[kBN] != 0,
                  " -DEDGE_K=", d.k % c[kBK] != 0);
  return LaunchDesc{source_,
                    "gemm_gpu",
                    options,
                    {static_cast<uint64_t>(CeilDiv(d.n, c[kBN])) * tx,
                     static_cast<uint64_t>(CeilDiv(d.m, c[kBM])) * ty},
                    {tx, ty},
                    GemmArgs(w)};
}

LaunchDesc GemmGpuTemplate::ReferenceLaunch(const Workload& w) const {
  const Dims d = DimsOf(w);
  return LaunchDesc{reference_source_,
                    "gemm_reference",
                    PreambleDefines(w),
                    {static_cast<uint64_t>(d.n), static_cast<uint64_t>(d.m)},
                    {},
                    GemmArgs(w)};
}

double GemmGpuTemplate::Flops(const Workload& w) const {
  const Dims d = DimsOf(w);
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) *
         static_cast<double>(d.k);
}

double GemmGpuTemplate::Bytes(const Workload& w) const {
  const Dims d = DimsOf(w);
  const double m = d.m, n = d.n, k = d.k;
  return (m * k + k * n + m * n) * 4.0;
}

std::vector<Feature> GemmGpuTemplate::DerivedFeatures(
    const KnobValues& c, const Workload& w, const DeviceLimits& limits) const {
  const Dims d = DimsOf(w);
  const double groups = static_cast<double>(CeilDiv(d.m, c[kBM])) *
                        static_cast<double>(CeilDiv(d.n, c[kBN]));
  const double wg = static_cast<double>((c[kBN] / c[kTN]) * (c[kBM] / c[kTM]));
  // FLOPs per byte a work-group loads per K step: BM + BN floats for
  // 2*BM*BN FLOPs (Volkov & Demmel, SC'08).
  const double intensity = 2.0 * c[kBM] * c[kBN] / (4.0 * (c[kBM] + c[kBN]));
  // Work on padding: computed elements of C over useful ones.
  const double padding =
      groups * c[kBM] * c[kBN] / std::max(static_cast<double>(d.m * d.n), 1.0);
  return LaunchFeatures(
      {.work_group_size = wg,
       .work_groups = groups,
       .local_mem_bytes = static_cast<double>(LocalBytes(c))},
      limits,
      {"log2_register_tile", std::log2(static_cast<double>(c[kTM] * c[kTN]))},
      {{"arithmetic_intensity", intensity},
       {"vector_width", static_cast<double>(c[kLOADV])}},
      {{"padding_factor", padding},
       {"double_buffered", static_cast<double>(c[kDB])}});
}

}  // namespace tunefleet::templates
