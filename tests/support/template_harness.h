// Test support: runs configs of a kernel template on the local OpenCL
// device (PoCL in CI) against the template's own reference kernel.
#ifndef TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_
#define TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels_templates/kernel_template.h"
#include "measure/measurer.h"
#include "opencl/opencl.h"
#include "trial/trial_request.h"

namespace tunefleet::testing {

// The device, opened once per test binary.
inline measure::Measurer& Device() {
  static std::unique_ptr<measure::Measurer> measurer = [] {
    auto device = opencl::OpenDevice(0, 0);
    auto m = measure::Measurer::Create(*std::move(device));
    return *std::move(m);
  }();
  return *measurer;
}

// A test suite that opens the device once for its tests (measurer_) and
// closes it after them; a device that does not open fails the suite.
class MeasurerSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    auto m = measure::Measurer::Create(*std::move(device));
    ASSERT_TRUE(m.ok()) << m.status();
    measurer_ = *std::move(m);
  }
  static void TearDownTestSuite() { measurer_.reset(); }

  static inline std::unique_ptr<measure::Measurer> measurer_;
};

inline templates::DeviceLimits DeviceLimits() {
  return trial::LimitsFromDeviceInfo(Device().device_info());
}

// Measures one config with a single timed launch.
inline tunefleet::v1::Measurement RunConfig(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const templates::KnobValues& config) {
  tunefleet::v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  return Device().Measure(
      trial::BuildMeasureRequest(tmpl, w, config, 1, quick));
}

// `count` random configs of the template valid for `w` on this device
// (fewer if the space is smaller), drawn with `seed`.
inline std::vector<templates::KnobValues> RandomConfigs(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<templates::KnobValues> out;
  const templates::DeviceLimits limits = DeviceLimits();
  for (int attempt = 0; attempt < 20000 && static_cast<int>(out.size()) < count;
       ++attempt) {
    templates::KnobValues c;
    for (const templates::Knob& k : tmpl.knobs()) {
      c.push_back(k.values[rng() % k.values.size()]);
    }
    if (tmpl.CheckConfig(c, w, limits).ok()) out.push_back(c);
  }
  return out;
}

// Up to `count` random configs of the template valid for `w` on this device
// that set knob `knob` to `value`, drawn with `seed`.
inline std::vector<templates::KnobValues> RandomConfigsWith(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const std::string& knob, int64_t value, int count, uint64_t seed) {
  size_t index = 0;
  while (index < tmpl.knobs().size() && tmpl.knobs()[index].name != knob) {
    ++index;
  }
  std::vector<templates::KnobValues> out;
  if (index == tmpl.knobs().size()) return out;
  for (templates::KnobValues& c : RandomConfigs(tmpl, w, 50 * count, seed)) {
    if (static_cast<int>(out.size()) == count) break;
    if (c[index] == value) out.push_back(std::move(c));
  }
  return out;
}

// Measures `config` on `w`; a config that does not verify (or fails
// otherwise) adds a line to `failures`.
inline void VerifyConfig(const templates::KernelTemplate& tmpl,
                         const templates::Workload& w,
                         const templates::KnobValues& config,
                         std::vector<std::string>* failures) {
  const tunefleet::v1::Measurement m = RunConfig(tmpl, w, config);
  if (m.error() != tunefleet::v1::Measurement::OK) {
    failures->push_back(
        absl::StrCat(w.Canonical(), " ", tmpl.ConfigString(config), ": ",
                     tunefleet::v1::Measurement::Error_Name(m.error()), " ",
                     m.error_message().substr(0, 300)));
  }
}

// Runs `count` random valid configs on each workload; returns a line per
// config that did not verify (empty: all good). Also fails when a
// workload has no valid config at all.
inline std::vector<std::string> CheckRandomConfigs(
    const templates::KernelTemplate& tmpl,
    const std::vector<templates::Workload>& workloads, int count,
    uint64_t seed) {
  std::vector<std::string> failures;
  for (const templates::Workload& w : workloads) {
    const std::vector<templates::KnobValues> configs =
        RandomConfigs(tmpl, w, count, seed++);
    if (configs.empty()) {
      failures.push_back(absl::StrCat(w.Canonical(), ": no valid config"));
    }
    for (const templates::KnobValues& c : configs) {
      VerifyConfig(tmpl, w, c, &failures);
    }
  }
  return failures;
}

// Runs each config (as text) on each workload; returns a line per config
// that did not verify, including configs that do not parse or that the
// template refuses for a workload (empty: all good).
inline std::vector<std::string> CheckConfigs(
    const templates::KernelTemplate& tmpl,
    const std::vector<templates::Workload>& workloads,
    const std::vector<std::string>& configs) {
  std::vector<std::string> failures;
  const templates::DeviceLimits limits = DeviceLimits();
  for (const std::string& text : configs) {
    absl::StatusOr<templates::KnobValues> config = tmpl.ParseConfig(text);
    if (!config.ok()) {
      failures.push_back(std::string(config.status().message()));
      continue;
    }
    for (const templates::Workload& w : workloads) {
      if (absl::Status s = tmpl.CheckConfig(*config, w, limits); !s.ok()) {
        failures.push_back(
            absl::StrCat(w.Canonical(), " ", text, ": ", s.message()));
        continue;
      }
      VerifyConfig(tmpl, w, *config, &failures);
    }
  }
  return failures;
}

// Runs `launch` once on the device with fp32 buffers `buffers`, holding
// `data` (by buffer name; buffers not given start zeroed; an output given
// starts with its data, for kernels that write part of it), and returns
// the output buffer read back. `floats`, when given, replace the launch's
// float arguments in order (e.g. clip bounds). Plain OpenCL, apart from
// the device's opening: the data are the test's own, not the agent's
// generated ones. OpenCL errors fail the test.
inline std::vector<float> RunOnHostData(
    const tunefleet::v1::KernelLaunch& launch,
    const google::protobuf::RepeatedPtrField<tunefleet::v1::BufferSpec>&
        buffers,
    const std::map<std::string, std::vector<float>>& data,
    const std::vector<float>& floats = {}) {
  static opencl::ClDevice device = *opencl::OpenDevice(0, 0);
  cl_int err = CL_SUCCESS;
  const char* text = launch.source().c_str();
  opencl::ClProgram program(
      clCreateProgramWithSource(device.context.get(), 1, &text, nullptr, &err));
  EXPECT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(clBuildProgram(program.get(), 1, &device.device,
                           launch.build_options().c_str(), nullptr, nullptr),
            CL_SUCCESS)
      << opencl::BuildLog(program.get(), device.device);
  opencl::ClKernel kernel(
      clCreateKernel(program.get(), launch.kernel_name().c_str(), &err));
  EXPECT_EQ(err, CL_SUCCESS);
  std::map<std::string, opencl::ClMem> mems;
  std::string output;
  size_t output_elements = 0;
  for (const tunefleet::v1::BufferSpec& b : buffers) {
    EXPECT_EQ(b.dtype(), tunefleet::v1::DTYPE_FP32) << b.name();
    std::vector<float> values(b.elements(), 0.0f);
    if (b.output()) {
      output = b.name();
      output_elements = b.elements();
    }
    if (const auto it = data.find(b.name()); it != data.end()) {
      EXPECT_EQ(it->second.size(), values.size()) << b.name();
      std::copy_n(it->second.begin(),
                  std::min(values.size(), it->second.size()), values.begin());
    }
    mems.emplace(
        b.name(),
        opencl::ClMem(clCreateBuffer(
            device.context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            values.size() * sizeof(float), values.data(), &err)));
    EXPECT_EQ(err, CL_SUCCESS) << b.name();
  }
  size_t next_float = 0;
  for (int i = 0; i < launch.args_size(); ++i) {
    const tunefleet::v1::KernelArg& a = launch.args(i);
    if (a.has_buffer()) {
      cl_mem m = mems.at(a.buffer()).get();
      err = clSetKernelArg(kernel.get(), i, sizeof(cl_mem), &m);
    } else if (a.value_case() == tunefleet::v1::KernelArg::kI32) {
      const cl_int v = a.i32();
      err = clSetKernelArg(kernel.get(), i, sizeof(v), &v);
    } else {
      EXPECT_EQ(a.value_case(), tunefleet::v1::KernelArg::kF32) << "arg " << i;
      const cl_float v =
          next_float < floats.size() ? floats[next_float] : a.f32();
      ++next_float;
      err = clSetKernelArg(kernel.get(), i, sizeof(v), &v);
    }
    EXPECT_EQ(err, CL_SUCCESS) << "arg " << i;
  }
  std::vector<size_t> global(launch.global_size().begin(),
                             launch.global_size().end());
  std::vector<size_t> local(launch.local_size().begin(),
                            launch.local_size().end());
  EXPECT_EQ(clEnqueueNDRangeKernel(device.queue.get(), kernel.get(),
                                   global.size(), nullptr, global.data(),
                                   local.empty() ? nullptr : local.data(), 0,
                                   nullptr, nullptr),
            CL_SUCCESS);
  std::vector<float> out(output_elements);
  if (output.empty()) {
    ADD_FAILURE() << "no output buffer";
    return out;
  }
  EXPECT_EQ(clEnqueueReadBuffer(device.queue.get(), mems.at(output).get(),
                                CL_TRUE, 0, out.size() * sizeof(float),
                                out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  return out;
}

// The template's reference kernel for the fp32 workload `w` run on `data`
// with `floats` (RunOnHostData).
inline std::vector<float> RunReferenceOn(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const std::map<std::string, std::vector<float>>& data,
    const std::vector<float>& floats = {}) {
  tunefleet::v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  const tunefleet::v1::MeasureRequest r =
      trial::BuildReferenceRequest(tmpl, w, 1, quick);
  return RunOnHostData(r.kernel(), r.buffers(), data, floats);
}

// The template's kernel of `config` (as text, which must parse) for the
// fp32 workload `w` run on `data` with `floats` (RunOnHostData).
inline std::vector<float> RunConfigOn(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const std::string& config,
    const std::map<std::string, std::vector<float>>& data,
    const std::vector<float>& floats = {}) {
  absl::StatusOr<templates::KnobValues> knobs = tmpl.ParseConfig(config);
  EXPECT_TRUE(knobs.ok()) << knobs.status();
  if (!knobs.ok()) return {};
  tunefleet::v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  const tunefleet::v1::MeasureRequest r =
      trial::BuildMeasureRequest(tmpl, w, *knobs, 1, quick);
  return RunOnHostData(r.kernel(), r.buffers(), data, floats);
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_TEMPLATE_HARNESS_H_
