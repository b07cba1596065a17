#include "search_space/task_features.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cost_model/features.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/registry.h"
#include "trial/trial_request.h"

namespace tunefleet::search_space {
namespace {

double Log2Plus1(double v) { return std::log2(1.0 + std::max(v, 0.0)); }

}  // namespace

TaskFeatures::TaskFeatures(const templates::KernelTemplate& tmpl,
                           templates::Workload workload,
                           templates::DeviceLimits limits)
    : tmpl_(&tmpl), workload_(std::move(workload)), limits_(limits) {
  for (const templates::Knob& k : tmpl.knobs()) {
    size_like_.push_back(k.size_like);
  }
}

std::vector<float> TaskFeatures::operator()(
    const templates::KnobValues& config) const {
  std::vector<float> f = cost_model::KnobFeatures(config, size_like_);
  for (const templates::Feature& d :
       tmpl_->DerivedFeatures(config, workload_, limits_)) {
    f.push_back(static_cast<float>(d.value));
  }
  for (const templates::Dim& d : workload_.dims()) {
    f.push_back(static_cast<float>(std::log2(static_cast<double>(d.value))));
  }
  f.push_back(static_cast<float>(Log2Plus1(limits_.compute_units)));
  f.push_back(static_cast<float>(Log2Plus1(limits_.max_work_group_size)));
  f.push_back(static_cast<float>(Log2Plus1(limits_.local_mem_bytes)));
  f.push_back(static_cast<float>(limits_.max_clock_mhz / 1000.0));
  f.push_back(static_cast<float>(limits_.preferred_vector_width_float));
  f.push_back(limits_.local_mem_is_global ? 1.0f : 0.0f);
  f.push_back(limits_.image_support ? 1.0f : 0.0f);
  f.push_back(static_cast<float>(Log2Plus1(limits_.image2d_max_width)));
  for (bool flag :
       {limits_.image2d_from_buffer, limits_.fp16, limits_.subgroups,
        limits_.qcom_extensions, limits_.arm_extensions}) {
    f.push_back(flag ? 1.0f : 0.0f);
  }
  return f;
}

std::vector<std::string> TaskFeatures::Names() const {
  std::vector<std::string> names;
  for (const templates::Knob& k : tmpl_->knobs()) {
    names.push_back(k.size_like ? "log2_" + k.name : k.name);
  }
  for (const templates::Knob& k : tmpl_->knobs()) {
    if (k.size_like) names.push_back("align_" + k.name);
  }
  for (const templates::Feature& d :
       tmpl_->DerivedFeatures(templates::KnobValues(tmpl_->knobs().size(), 1),
                              workload_, limits_)) {
    names.push_back(d.name);
  }
  for (const templates::Dim& d : workload_.dims()) {
    names.push_back("log2_" + d.name);
  }
  for (const char* n :
       {"log2_compute_units", "log2_max_work_group_size",
        "log2_local_mem_bytes", "clock_ghz", "preferred_vector_width",
        "local_mem_is_global", "image_support", "log2_image2d_max_width",
        "image2d_from_buffer", "fp16", "subgroups", "qcom_extensions",
        "arm_extensions"}) {
    names.push_back(n);
  }
  return names;
}

absl::StatusOr<std::function<std::vector<float>(uint64_t)>> SpaceFeatures(
    const search_space::SearchSpace& space, TaskFeatures features) {
  const std::vector<templates::Knob>& knobs = features.tmpl().knobs();
  // where[i]: the position in the space of the template's i-th knob; absent
  // (kAdded) for a knob the template gained after the table was recorded,
  // which takes its first value (see the header).
  constexpr size_t kAdded = static_cast<size_t>(-1);
  std::vector<size_t> where;
  size_t found = 0;
  for (const templates::Knob& k : knobs) {
    size_t pos = 0;
    while (pos < space.knobs().size() && space.knobs()[pos].name != k.name) {
      ++pos;
    }
    if (pos == space.knobs().size()) {
      where.push_back(kAdded);
    } else {
      where.push_back(pos);
      ++found;
    }
  }
  if (found != space.knobs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the space has ", space.knobs().size(), " knobs, ", found,
                     " of them knobs of template ", features.tmpl().name()));
  }
  templates::KnobValues added(knobs.size());
  for (size_t i = 0; i < knobs.size(); ++i) added[i] = knobs[i].values.front();
  return [&space, where, added, features](uint64_t index) {
    const std::vector<int64_t> values = space.Config(index);
    templates::KnobValues config = added;
    for (size_t i = 0; i < where.size(); ++i) {
      if (where[i] != kAdded) config[i] = values[where[i]];
    }
    return features(config);
  };
}

absl::StatusOr<TaskFeatures> TableTaskFeatures(
    const search_space::Table& table) {
  auto field = [&table](const char* key) -> const std::string* {
    auto it = table.metadata.find(key);
    return it == table.metadata.end() ? nullptr : &it->second;
  };
  const std::string* name = field("template");
  const std::string* workload_text = field("workload");
  if (name == nullptr || workload_text == nullptr) {
    return absl::NotFoundError("the table names no template and workload");
  }
  absl::StatusOr<const templates::KernelTemplate*> tmpl =
      templates::FindTemplate("", *name);
  if (!tmpl.ok()) return absl::InvalidArgumentError(tmpl.status().message());
  absl::StatusOr<templates::Workload> workload =
      templates::Workload::ParseCanonical(*workload_text);
  if (!workload.ok()) return workload.status();
  tunefleet::v1::DeviceInfo device;
  if (const std::string* json = field("device")) {
    if (!google::protobuf::util::JsonStringToMessage(*json, &device).ok()) {
      return absl::InvalidArgumentError(
          "the table's device metadata is not "
          "DeviceInfo JSON");
    }
  }
  return TaskFeatures(**tmpl, *std::move(workload),
                      trial::LimitsFromDeviceInfo(device));
}

}  // namespace tunefleet::search_space
