#include "cli/space_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/flags.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "cli/common.h"
#include "cli/embedded.h"
#include "cli/templates_command.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/task.h"
#include "kernels_templates/workload.h"
#include "nlohmann/json.hpp"
#include "search_space/build_space.h"
#include "search_space/space.h"
#include "trial/trial_request.h"

namespace tunefleet::cli {
namespace {

// "a, b": the names of the templates of `op` for which `keep` holds.
template <typename Keep>
std::string TemplatesOf(absl::string_view op, Keep keep) {
  std::vector<std::string> names;
  for (const templates::KernelTemplate* t : templates::AllTemplates()) {
    if (t->op() == op && keep(*t)) names.push_back(std::string(t->name()));
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// The workload as `tune` reads it (--op, --shape, --dtype; the op defaults
// to the template's, else gemm) and the template that runs it. Errors:
// NOT_FOUND for an unknown template (listing the known ones);
// INVALID_ARGUMENT for a template of another op or one that does not run
// the workload, and Workload::Parse's for a bad shape or dtype.
absl::StatusOr<templates::Task> ResolveTask(const SpaceOptions& o) {
  const templates::KernelTemplate* named = nullptr;
  if (!o.template_name.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(named, TemplateFromArg(o.template_name));
  }
  const std::string op =
      !o.op.empty() ? o.op : (named ? std::string(named->op()) : "gemm");
  if (named != nullptr && named->op() != op) {
    return absl::InvalidArgumentError(absl::StrCat(
        "template ", named->name(), " runs op ", named->op(), ", not ", op,
        "; templates of ", op, ": ",
        TemplatesOf(op,
                    [](const templates::KernelTemplate&) { return true; })));
  }
  TUNEFLEET_ASSIGN_OR_RETURN(templates::Workload workload,
                             templates::Workload::Parse(op, o.shape, o.dtype));
  if (named == nullptr) {
    TUNEFLEET_ASSIGN_OR_RETURN(named, templates::FindTemplateFor(workload, ""));
  } else if (!named->Accepts(workload)) {
    return absl::InvalidArgumentError(
        absl::StrCat("template ", named->name(), " does not run ",
                     workload.Canonical(), "; templates that do: ",
                     TemplatesOf(op, [&](const templates::KernelTemplate& t) {
                       return t.Accepts(workload);
                     })));
  }
  return templates::Task{std::move(workload), named};
}

// A DeviceInfo from its JSON (proto3 JSON, as `tunefleet-agent --info`
// prints it). Errors: INVALID_ARGUMENT naming `what`.
absl::StatusOr<tunefleet::v1::DeviceInfo> ParseDeviceInfo(
    const std::string& json, const std::string& what) {
  tunefleet::v1::DeviceInfo info;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json, &info);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is not a device info in JSON: ", parsed.ToString()));
  }
  return info;
}

// The device --device-info or --platform/--device name, and where its info
// came from.
struct Device {
  tunefleet::v1::DeviceInfo info;
  std::string source;
};

absl::StatusOr<Device> DeviceFor(const SpaceOptions& o) {
  if (o.device_info.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::DeviceInfo info,
                               LocalDeviceInfo(o.platform, o.device));
    return Device{std::move(info), "tunefleet-agent --info"};
  }
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::string json, base::ReadWholeFile(o.device_info, "device info file"));
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::DeviceInfo info,
                             ParseDeviceInfo(json, o.device_info));
  return Device{std::move(info), o.device_info};
}

// Up to `n` distinct valid configs drawn with `seed`, by index.
std::vector<uint64_t> SampleValid(const search_space::SearchSpace& space,
                                  uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out;
  if (space.enumerable()) {
    const std::vector<uint64_t>& valid = space.valid_indices();
    std::sample(valid.begin(), valid.end(), std::back_inserter(out), n, rng);
    return out;
  }
  // A space too large to list: random valid configs, a few tries for each
  // one wanted (a small space may hold fewer than n).
  std::set<uint64_t> picked;
  for (uint64_t tries = 0; picked.size() < n && tries < uint64_t{4} * n;
       ++tries) {
    const uint64_t i = space.RandomValid(rng);
    if (i == std::numeric_limits<uint64_t>::max()) break;
    picked.insert(i);
  }
  return {picked.begin(), picked.end()};
}

nlohmann::json LimitsJson(const templates::DeviceLimits& l) {
  return {{"max_work_group_size", l.max_work_group_size},
          {"max_work_item_sizes", l.max_work_item_sizes},
          {"local_mem_bytes", l.local_mem_bytes},
          {"max_mem_alloc_bytes", l.max_mem_alloc_bytes},
          {"compute_units", l.compute_units},
          {"max_clock_mhz", l.max_clock_mhz},
          {"preferred_vector_width_float", l.preferred_vector_width_float},
          {"local_mem_is_global", l.local_mem_is_global}};
}

void PrintSpace(const nlohmann::json& j) {
  const nlohmann::json& limits = j["device_limits"];
  std::cout << absl::StrFormat(
      "%s (version %d) for %s\n", j["template_name"].get<std::string>(),
      j["version"].get<int>(), j["workload_key"].get<std::string>());
  std::cout << absl::StrFormat(
      "device:         %s (%s): work-groups of at most %d, local memory %d "
      "bytes%s\n",
      j["device"]["name"].get<std::string>(),
      j["device"]["platform"].get<std::string>(),
      limits["max_work_group_size"].get<uint64_t>(),
      limits["local_mem_bytes"].get<uint64_t>(),
      limits["local_mem_is_global"].get<bool>() ? " (in global memory)" : "");
  const uint64_t raw = j["raw_size"].get<uint64_t>();
  const uint64_t valid = j["valid_size"].get<uint64_t>();
  std::cout << absl::StrFormat("raw configs:    %d (%d knobs)\n", raw,
                               j["knobs"].size());
  std::cout << absl::StrFormat(
      "valid configs:  %s%d (%.1f%%)%s\n",
      j["valid_exact"].get<bool>() ? "" : "about ", valid,
      raw ? 100.0 * static_cast<double>(valid) / static_cast<double>(raw) : 0,
      j["valid_exact"].get<bool>()
          ? ""
          : ", estimated from random configs: the space is too large to list");
  const nlohmann::json& sample = j["sample"];
  if (sample.empty()) return;
  std::cout << absl::StrFormat("sample of %d valid configs (seed %d):\n",
                               sample.size(), j["seed"].get<uint64_t>());
  for (const nlohmann::json& config : sample) {
    std::cout << "  " << config.get<std::string>() << "\n";
  }
}

}  // namespace

absl::StatusOr<tunefleet::v1::DeviceInfo> LocalDeviceInfo(int platform,
                                                          int device,
                                                          double timeout_ms) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::string agent, FindAgentBinary());
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return base::ErrnoError("cannot create", "pipe");
  }
  base::UniqueFd read_end(fds[0]), write_end(fds[1]);
  base::Subprocess::Options spawn;
  spawn.fds = {{STDOUT_FILENO, write_end.get()}};
  TUNEFLEET_ASSIGN_OR_RETURN(
      base::Subprocess child,
      base::Subprocess::Spawn(
          {agent, "--info", "--platform", std::to_string(platform), "--device",
           std::to_string(device)},
          spawn));
  write_end.Reset();
  const std::string what = absl::StrCat(agent, " --info");
  const base::Deadline deadline = base::DeadlineIn(timeout_ms);
  absl::StatusOr<std::string> out = base::ReadToEof(read_end.get(), deadline);
  if (!out.ok()) {
    // The child is killed and reaped with its handle.
    return absl::Status(out.status().code(),
                        absl::StrCat(what, ": ", out.status().message()));
  }
  absl::StatusOr<base::ExitStatus> exit = child.Wait(deadline);
  if (!exit.ok()) {
    return absl::Status(exit.status().code(),
                        absl::StrCat(what, ": ", exit.status().message()));
  }
  if (!exit->success()) {
    return absl::UnavailableError(absl::StrCat(
        what, " failed (", exit->ToString(),
        "); give the device's limits with --device-info FILE instead"));
  }
  return ParseDeviceInfo(*out, what);
}

void AddSpaceOptions(CLI::App* cmd, SpaceOptions& o) {
  cmd->footer(
      "Examples:\n"
      "  tunefleet space --template gemm_tiled --shape M=64,N=64,K=64\n"
      "  tunefleet space --op conv2d --shape N=1,C=16,H=24,W=96,K=32,R=3,S=3 "
      "--sample 5 --json");
  cmd->add_option("--op", o.op,
                  "op (default: the template's, else gemm); `tunefleet "
                  "templates` lists ops and their dims");
  cmd->add_option("--shape", o.shape,
                  "shape, e.g. M=512,N=512,K=512 (attributes too: act=relu)")
      ->required();
  cmd->add_option("--dtype", o.dtype, "fp32 or fp16")->capture_default_str();
  cmd->add_option("--template", o.template_name,
                  "template name, or a template spec file (.toml/.json) "
                  "(default: the first template that runs the workload)");
  base::AddRangeOption(cmd, "--sample", o.sample, "valid configs to print", 0,
                       100000);
  cmd->add_option("--seed", o.seed, "random seed of the sample")
      ->capture_default_str();
  cmd->add_option("--device-info", o.device_info,
                  "read the device's limits from this JSON file (what "
                  "`tunefleet-agent --info` prints, e.g. on the target "
                  "device) instead of asking this machine's OpenCL device");
  cmd->add_option("--platform", o.platform, "OpenCL platform index");
  cmd->add_option("--device", o.device, "OpenCL device index");
  cmd->add_flag("--json", o.json,
                "print one JSON object on stdout: template, version, op, "
                "workload, device, device_limits, knobs, raw_size, "
                "valid_size, valid_exact, seed, sample");
}

int RunSpace(const SpaceOptions& o) {
  absl::StatusOr<templates::Task> task = ResolveTask(o);
  if (!task.ok()) return ReportError("space", task.status());
  absl::StatusOr<Device> device = DeviceFor(o);
  if (!device.ok()) return ReportError("space", device.status());
  const templates::DeviceLimits limits =
      trial::LimitsFromDeviceInfo(device->info);
  if (absl::Status s = task->tmpl->CheckWorkload(task->workload, limits);
      !s.ok()) {
    return ReportError("space", s);
  }
  const std::unique_ptr<search_space::SearchSpace> space =
      search_space::BuildSpace(*task->tmpl, task->workload, limits);
  nlohmann::json knobs = nlohmann::json::array();
  for (const search_space::KnobSpec& k : space->knobs())
    knobs.push_back(k.name);
  nlohmann::json sample = nlohmann::json::array();
  for (uint64_t index : SampleValid(*space, o.sample, o.seed)) {
    sample.push_back(space->ConfigString(index));
  }
  const nlohmann::json j = {{"template_name", std::string(task->tmpl->name())},
                            {"version", task->tmpl->version()},
                            {"op", task->workload.op()},
                            {"workload_key", task->workload.Canonical()},
                            {"device",
                             {{"name", device->info.device_name()},
                              {"platform", device->info.platform_name()},
                              {"source", device->source}}},
                            {"device_limits", LimitsJson(limits)},
                            {"knobs", std::move(knobs)},
                            {"raw_size", space->raw_size()},
                            {"valid_size", space->valid_size()},
                            {"valid_exact", space->enumerable()},
                            {"seed", o.seed},
                            {"sample", std::move(sample)}};
  if (o.json) {
    std::cout << JsonText(j) << "\n";
  } else {
    PrintSpace(j);
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
