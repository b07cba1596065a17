// How fast each built-in template checks configs: every raw config of a
// representative task's space (up to --max-configs) through
// KernelTemplate::CheckConfig, as a job does once when it builds its search
// space (search_space/build_space.h BuildSpace). Prints raw and valid configs
// and ns per config checked (median of --repeat scans).
//
// Uses only the template interface (registry.h, kernel_template.h), so the
// same file builds against earlier commits to compare engines: copy it into
// an older checkout's bench/ and build it there (bench/README.md).
//
//   template_check [--repeat 5] [--max-configs 1048576] [--json]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"

namespace {

using tunefleet::templates::DeviceLimits;
using tunefleet::templates::KernelTemplate;
using tunefleet::templates::KnobValues;
using tunefleet::templates::Workload;

// One task per built-in template: op, template, shape.
struct Task {
  const char* op;
  const char* tmpl;
  const char* shape;
};
constexpr Task kTasks[] = {
    {"gemm", "gemm_tiled", "M=512,N=512,K=512"},
    {"gemm", "gemm_gpu", "M=1024,N=1024,K=1024"},
    {"dense", "dense_gemm", "M=8,N=1000,K=1024"},
    {"conv2d", "conv2d_direct", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,PH=1,PW=1"},
    {"conv2d", "conv2d_1x1_gemm", "N=1,C=64,H=56,W=56,K=128,R=1,S=1"},
    {"depthwise_conv2d", "depthwise_direct",
     "N=1,C=64,H=56,W=56,R=3,S=3,PH=1,PW=1"},
    {"pool2d", "pool2d_direct", "N=1,C=64,H=112,W=112,R=3,S=3,SH=2,SW=2"},
    {"global_pool", "global_pool_reduce", "N=1,C=1024,H=7,W=7"},
    {"softmax", "softmax_rows", "N=8,D=1000"},
};

// A mid-range GPU's limits, so that most constraints are reached.
DeviceLimits Limits() {
  DeviceLimits l;
  l.max_work_group_size = 1024;
  l.max_work_item_sizes = {1024, 1024, 64};
  l.local_mem_bytes = 48 * 1024;
  l.max_mem_alloc_bytes = uint64_t{4} << 30;
  l.compute_units = 16;
  l.max_clock_mhz = 1000;
  l.preferred_vector_width_float = 4;
  return l;
}

struct Scan {
  uint64_t configs = 0;
  uint64_t valid = 0;
  double ns = 0;
};

// Steps `digit` to the next raw config in mixed-radix order (the last
// knob fastest) and sets `config` to match; false after the last one.
bool NextConfig(const std::vector<tunefleet::templates::Knob>& knobs,
                std::vector<size_t>& digit, KnobValues& config) {
  for (size_t k = knobs.size(); k-- > 0;) {
    if (++digit[k] < knobs[k].values.size()) {
      config[k] = knobs[k].values[digit[k]];
      return true;
    }
    digit[k] = 0;
    config[k] = knobs[k].values[0];
  }
  return false;
}

// Checks the first `max_configs` raw configs.
Scan ScanOnce(const KernelTemplate& t, const Workload& w,
              const DeviceLimits& limits, uint64_t max_configs) {
  const auto& knobs = t.knobs();
  std::vector<size_t> digit(knobs.size(), 0);
  KnobValues config(knobs.size());
  for (size_t i = 0; i < knobs.size(); ++i) config[i] = knobs[i].values[0];
  Scan scan;
  const auto start = std::chrono::steady_clock::now();
  do {
    if (t.ConfigValid(config, w, limits)) ++scan.valid;
    ++scan.configs;
  } while (scan.configs < max_configs && NextConfig(knobs, digit, config));
  scan.ns = std::chrono::duration<double, std::nano>(
                std::chrono::steady_clock::now() - start)
                .count();
  return scan;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("ns per config checked by each built-in template");
  int repeat = 5;
  uint64_t max_configs = uint64_t{1} << 20;
  bool json = false;
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--repeat", repeat, "scans per template (median printed)");
  app.add_option("--max-configs", max_configs, "raw configs per scan at most");
  app.add_flag("--json", json, "one JSON object per template");
  CLI11_PARSE(app, argc, argv);

  const DeviceLimits limits = Limits();
  if (!json) {
    std::printf("%-20s %10s %10s %12s\n", "template", "configs", "valid",
                "ns/config");
  }
  for (const Task& task : kTasks) {
    auto t = tunefleet::templates::FindTemplate(task.op, task.tmpl);
    auto w = Workload::Parse(task.op, task.shape);
    if (!t.ok() || !w.ok()) {
      std::fprintf(
          stderr, "template_check: %s %s: %s\n", task.tmpl, task.shape,
          std::string((t.ok() ? w.status() : t.status()).message()).c_str());
      return 1;
    }
    std::vector<double> ns_per_config;
    Scan scan;
    for (int r = 0; r < std::max(repeat, 1); ++r) {
      scan = ScanOnce(**t, *w, limits, max_configs);
      ns_per_config.push_back(scan.ns / static_cast<double>(scan.configs));
    }
    std::sort(ns_per_config.begin(), ns_per_config.end());
    const double median = ns_per_config[ns_per_config.size() / 2];
    if (json) {
      std::printf(
          "{\"template\": \"%s\", \"configs\": %llu, \"valid\": %llu, "
          "\"ns_per_config\": %.1f}\n",
          task.tmpl, static_cast<unsigned long long>(scan.configs),
          static_cast<unsigned long long>(scan.valid), median);
    } else {
      std::printf("%-20s %10llu %10llu %12.1f\n", task.tmpl,
                  static_cast<unsigned long long>(scan.configs),
                  static_cast<unsigned long long>(scan.valid), median);
    }
  }
  return 0;
}
