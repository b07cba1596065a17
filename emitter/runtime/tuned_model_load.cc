// LoadModelPlan() of tunefleet_tuned.h: a model plan loaded at run time
// with the checks a table file gets (tuned_table_file.cc): every kernel
// source of the plan must be one this library was built with, and the
// plan's device key must be one the library (or its loaded table) knows,
// measured on the device's driver. Then Model::LoadPlan does its own
// checks (format, model, device name, libraries).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "tuned_image_pack.h"
#include "tuned_runtime.h"
#include "tuned_table.h"
#include "tunefleet_model.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace {

// Whether `source` is one of the library's compiled-in sources (the same
// bytes, so the same SHA-256 as kSourceHashes says).
bool BuiltIn(const std::string& source) {
  for (size_t i = 0; i < internal::kNumSources; ++i) {
    if (source == internal::kSources[i]) return true;
  }
  return source == internal::kImagePackSource;
}

// The label of the first step whose kernel reads plan source `index`.
std::string StepOf(const Plan& plan, int32_t index) {
  for (const PlanStep& step : plan.steps) {
    for (const PlanCommand& c : step.commands) {
      if (c.kind == PlanCommand::kKernel && c.source == index) {
        return "step " + step.label + " (" + step.workload + ")";
      }
    }
  }
  return "the image packing kernel";
}

}  // namespace

cl_int LoadModelPlan(cl_context context, cl_device_id device,
                     const char* plan_path, const char* weights_path,
                     const ModelLoadOptions& options,
                     std::unique_ptr<Model>* out, std::string* message) {
  auto fail = [&](cl_int code, const std::string& text) {
    if (message != nullptr) {
      *message = text + "; nothing was loaded (keep the plan in use)";
    }
    return code;
  };
  if (plan_path == nullptr || weights_path == nullptr) {
    return fail(kPlanUnreadable, "LoadModelPlan: no plan or weights path");
  }
  std::string plan_file, weights_file, error;
  int32_t code = ReadWholeFile(plan_path, &plan_file, &error);
  if (code == 0) code = ReadWholeFile(weights_path, &weights_file, &error);
  if (code != 0) return fail(code, error);
  Plan plan;
  code = DecodePlan(plan_file, weights_file,
                    PlanExpectations{options.model_sha256, options.device_key},
                    &plan, &error);
  if (code != 0) return fail(code, std::string(plan_path) + ": " + error);
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    if (!BuiltIn(plan.sources[i])) {
      return fail(kTableOtherSources,
                  std::string(plan_path) + ": " +
                      StepOf(plan, static_cast<int32_t>(i)) +
                      " uses a kernel source this library was not built "
                      "with");
    }
  }
  const std::string key = plan.header.device_key;  // plan moves below
  std::vector<std::string> drivers;
  if (!internal::DriversOfKey(key, &drivers)) {
    return fail(kTableOtherDevice,
                std::string(plan_path) + ": a plan of device key " + key +
                    ", which neither this library nor its loaded table has");
  }
  const std::string actual = internal::DriverVersion(device);
  if (std::find(drivers.begin(), drivers.end(), actual) == drivers.end()) {
    std::string measured;
    for (const std::string& d : drivers) {
      measured += (measured.empty() ? "'" : ", '") + d + "'";
    }
    return fail(kTableOtherDriver,
                std::string(plan_path) + ": device key " + key +
                    " was measured on driver " + measured +
                    ", this device runs driver '" + actual + "'");
  }
  code =
      Model::LoadPlan(context, device, std::move(plan), options, out, &error);
  if (code != CL_SUCCESS) return fail(code, error);
  if (message != nullptr) {
    *message =
        std::string("plan ") + plan_path + " of device key " + key + " loaded";
  }
  return CL_SUCCESS;
}

}  // namespace tunefleet_tuned
