#include "kernels_templates/common/template_support.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet::templates {

absl::string_view DtypeSource();     // embedded dtype.cl
absl::string_view EpilogueSource();  // embedded epilogue.cl
absl::string_view VectorSource();    // embedded vector.cl

std::string KernelPreamble() {
  return absl::StrCat(DtypeSource(), "\n", EpilogueSource(), "\n");
}

std::string VectorKernelPreamble() {
  return absl::StrCat(KernelPreamble(), VectorSource(), "\n");
}

Epilogue EpilogueOf(const Workload& w) {
  Epilogue e;
  const std::string& affine = w.attr("affine");
  e.affine = affine == "scale_shift" ? 2 : affine == "shift" ? 1 : 0;
  const std::string& act = w.attr("act");
  if (act == "relu") {
    e.act = 1;
  } else if (act == "clip") {
    e = {e.affine, 2, 0.0f, 6.0f};
  } else if (act == "hardsigmoid") {
    e = {e.affine, 3, 0.2f, 0.5f};
  } else if (act == "hardswish") {
    e = {e.affine, 4, 1.0f / 6.0f, 0.5f};
  }
  return e;
}

std::string PreambleDefines(const Workload& w) {
  const Epilogue e = EpilogueOf(w);
  return absl::StrCat(" -DDTYPE_FP16=", w.dtype() == "fp16" ? 1 : 0,
                      " -DAFFINE=", e.affine, " -DACT=", e.act);
}

void AddEpilogueBuffers(int64_t channels, std::vector<BufferDesc>* buffers) {
  buffers->push_back({"scale", static_cast<uint64_t>(channels), false, 101});
  buffers->push_back({"shift", static_cast<uint64_t>(channels), false, 102});
}

void AddEpilogueArgs(const Workload& w, std::vector<ArgDesc>* args) {
  const Epilogue e = EpilogueOf(w);
  args->push_back(ArgDesc::Buffer("scale"));
  args->push_back(ArgDesc::Buffer("shift"));
  args->push_back(ArgDesc::Float(e.act_a));
  args->push_back(ArgDesc::Float(e.act_b));
}

int ElementBytes(const Workload& w) { return w.dtype() == "fp16" ? 2 : 4; }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

absl::Status CheckBuffersFit(const KernelTemplate& tmpl, const Workload& w,
                             const DeviceLimits& limits) {
  for (const BufferDesc& b : tmpl.Buffers(w)) {
    const uint64_t bytes = b.elements * (b.dtype == "fp16" ? 2 : 4);
    if (limits.max_mem_alloc_bytes != 0 && bytes > limits.max_mem_alloc_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.name, " of ", w.Canonical(), " needs ",
                       bytes, " bytes, over the device's max allocation of ",
                       limits.max_mem_alloc_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckConfigSize(const KernelTemplate& tmpl,
                             const KnobValues& config) {
  if (config.size() == tmpl.knobs().size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("config has ", config.size(), " values, template has ",
                   tmpl.knobs().size(), " knobs"));
}

absl::Status ConfigStatus(const KernelTemplate& tmpl, const KnobValues& config,
                          const char* why) {
  if (why == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(tmpl.ConfigString(config), ": ", why));
}

absl::Status CheckWorkGroup(const KernelTemplate& tmpl,
                            const KnobValues& config, const WorkGroupUse& use,
                            const DeviceLimits& limits) {
  int64_t size = 1;
  for (int64_t l : use.local) size *= l;
  if (static_cast<uint64_t>(size) > limits.max_work_group_size) {
    return ConfigStatus(tmpl, config, use.size_reason);
  }
  for (size_t d = 0;
       d < use.local.size() && d < limits.max_work_item_sizes.size(); ++d) {
    if (static_cast<uint64_t>(use.local[d]) > limits.max_work_item_sizes[d]) {
      return ConfigStatus(
          tmpl, config,
          "work-group dimension exceeds the device's work-item sizes");
    }
  }
  if (use.local_mem_bytes > limits.local_mem_bytes) {
    return ConfigStatus(tmpl, config, use.local_mem_reason);
  }
  return absl::OkStatus();
}

std::vector<Feature> LaunchFeatures(const LaunchShape& launch,
                                    const DeviceLimits& limits,
                                    Feature per_item, std::vector<Feature> own,
                                    std::vector<Feature> tail) {
  const double groups = launch.work_groups;
  const double cus = std::max<double>(limits.compute_units, 1);
  const double waves = std::ceil(groups / cus);
  std::vector<Feature> features = {
      {"log2_work_group_size", std::log2(launch.work_group_size)},
      {"log2_work_groups", std::log2(groups)},
      {"log2_work_items", std::log2(groups * launch.work_group_size)},
      std::move(per_item),
      {"log2_local_mem_bytes", std::log2(1.0 + launch.local_mem_bytes)},
      {"local_mem_fraction",
       limits.local_mem_bytes ? launch.local_mem_bytes / limits.local_mem_bytes
                              : 0.0},
  };
  for (Feature& f : own) features.push_back(std::move(f));
  features.push_back({"groups_per_compute_unit", groups / cus});
  features.push_back({"wave_efficiency", groups / (waves * cus)});
  for (Feature& f : tail) features.push_back(std::move(f));
  return features;
}

}  // namespace tunefleet::templates
