// libFuzzer target: users' template specs (kernels_templates/spec). The
// first byte picks the format (even: TOML, odd: JSON), the rest is the
// spec. A spec that parses is then used as a job would use it, for a
// workload of its op when that op is known (built in, or one of the ops
// the seed specs define, registered once at start-up): workload check,
// constraints of the first config, buffers, launches, FLOP and byte
// counts. Nothing may crash, leak or hit undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "kernels_templates/workload.h"
#include "tests/support/device_limits.h"

namespace {

using namespace tunefleet::templates;  // NOLINT: a fuzz target's brevity

// Work-groups of up to 256, 32 KiB of local memory, 4 compute units.
DeviceLimits FuzzDevice() { return tunefleet::testing::GpuLimits(256, 32, 4); }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The ops of the seed specs (tests/data/templates), so that their
  // mutations reach evaluation.
  for (const char* op : {"saxpy", "hostile_scale"}) {
    OpSpec spec;
    spec.name = op;
    spec.dims = {{"N", {}}};
    spec.dtypes = {Dtype::kFp32};
    (void)RegisterOp(spec);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string format = data[0] % 2 ? "json" : "toml";
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto t = SpecTemplate::Parse(text, format, "kernel void f() {}");
  if (!t.ok()) return 0;
  const SpecTemplate& tmpl = **t;
  const OpSpec* op = FindOp(tmpl.op());
  if (op == nullptr) return 0;
  std::vector<Dim> dims;
  int64_t value = 1000;
  for (const DimSpec& d : op->dims) {
    dims.push_back({std::string(d.name), value});
    value = value % 7 + 3;  // 1000, 4, 7, 3, 6, ...
  }
  auto w = Workload::Create(tmpl.op(), dims);
  if (!w.ok()) return 0;
  const DeviceLimits limits = FuzzDevice();
  (void)tmpl.CheckWorkload(*w, limits);
  (void)tmpl.Buffers(*w);
  (void)tmpl.Flops(*w);
  (void)tmpl.Bytes(*w);
  (void)tmpl.ReferenceLaunch(*w);
  KnobValues config;
  for (const Knob& k : tmpl.knobs()) config.push_back(k.values.back());
  (void)tmpl.CheckConfig(config, *w, limits);
  (void)tmpl.Launch(config, *w);
  (void)tmpl.ConfigString(config);
  (void)tmpl.SourceHash();
  return 0;
}
