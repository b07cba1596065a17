// What template tests share off the device: workloads that must parse, the
// registry's templates by name, the limits of a few device classes, a
// config checked from its text (and configs expected to be refused), and a
// user's spec of a new op.
#ifndef TUNEFLEET_TESTS_SUPPORT_TEMPLATE_FIXTURES_H_
#define TUNEFLEET_TESTS_SUPPORT_TEMPLATE_FIXTURES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "tests/support/command_runner.h"
#include "tests/support/device_limits.h"

namespace tunefleet::testing {

// The workload `op` with `shape`; the test fails when it does not parse.
inline templates::Workload MustParse(absl::string_view op,
                                     absl::string_view shape,
                                     absl::string_view dtype = "fp32") {
  auto w = templates::Workload::Parse(op, shape, dtype);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

// Workloads of the built-in convolution ops.
inline templates::Workload Conv(absl::string_view shape,
                                absl::string_view dtype = "fp32") {
  return MustParse("conv2d", shape, dtype);
}
inline templates::Workload Depthwise(absl::string_view shape,
                                     absl::string_view dtype = "fp32") {
  return MustParse("depthwise_conv2d", shape, dtype);
}

// The registry's template called `name` (it must exist).
inline const templates::KernelTemplate& BuiltinTemplate(
    absl::string_view name) {
  return *templates::FindTemplate("", name).value();
}

// The built-in templates the template tests check.
inline const templates::KernelTemplate& Conv2dDirect() {
  return BuiltinTemplate("conv2d_direct");
}
inline const templates::KernelTemplate& DepthwiseDirect() {
  return BuiltinTemplate("depthwise_direct");
}
inline const templates::KernelTemplate& Pool2dDirect() {
  return BuiltinTemplate("pool2d_direct");
}
inline const templates::KernelTemplate& GlobalPoolReduce() {
  return BuiltinTemplate("global_pool_reduce");
}
inline const templates::KernelTemplate& SoftmaxRows() {
  return BuiltinTemplate("softmax_rows");
}
inline const templates::KernelTemplate& EltwiseDirect() {
  return BuiltinTemplate("eltwise_direct");
}
inline const templates::KernelTemplate& ResizeDirect() {
  return BuiltinTemplate("resize_direct");
}
inline const templates::KernelTemplate& LayernormRows() {
  return BuiltinTemplate("layernorm_rows");
}
inline const templates::KernelTemplate& ConvTranspose2dDirect() {
  return BuiltinTemplate("conv_transpose2d_direct");
}
inline const templates::KernelTemplate& BatchMatmulTiled() {
  return BuiltinTemplate("batch_matmul_tiled");
}
inline const templates::KernelTemplate& CopyStrided() {
  return BuiltinTemplate("copy_strided");
}
inline const templates::KernelTemplate& FillRange() {
  return BuiltinTemplate("fill_range");
}
inline const templates::KernelTemplate& ReduceAxis() {
  return BuiltinTemplate("reduce_axis");
}

// CheckConfig of a config given as text, which must parse.
inline absl::Status CheckText(const templates::KernelTemplate& tmpl,
                              const templates::Workload& w,
                              const templates::DeviceLimits& limits,
                              const char* text) {
  auto config = tmpl.ParseConfig(text);
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return config.status();
  return tmpl.CheckConfig(*config, w, limits);
}

// The names of `features`, in order (a template's DerivedFeatures).
inline std::vector<std::string> FeatureNames(
    const std::vector<templates::Feature>& features) {
  std::vector<std::string> names;
  for (const templates::Feature& f : features) names.push_back(f.name);
  return names;
}

// Expects configs `a` and `b` (as text, which must parse) to derive
// features of the same names, in the same order, for `w`: the cost model
// reads every config's features as one table.
inline void ExpectSameFeatureNames(const templates::KernelTemplate& tmpl,
                                   const templates::Workload& w,
                                   const templates::DeviceLimits& limits,
                                   const char* a, const char* b) {
  auto config_a = tmpl.ParseConfig(a);
  auto config_b = tmpl.ParseConfig(b);
  ASSERT_TRUE(config_a.ok()) << a << ": " << config_a.status();
  ASSERT_TRUE(config_b.ok()) << b << ": " << config_b.status();
  EXPECT_EQ(FeatureNames(tmpl.DerivedFeatures(*config_a, w, limits)),
            FeatureNames(tmpl.DerivedFeatures(*config_b, w, limits)));
}

// Expects every config of `refusals` ({config text, part of the reason})
// to be refused for `w` with that reason.
inline void ExpectRefusals(
    const templates::KernelTemplate& tmpl, const templates::Workload& w,
    const templates::DeviceLimits& limits,
    const std::vector<std::pair<const char*, const char*>>& refusals) {
  for (const auto& [text, reason] : refusals) {
    EXPECT_THAT(CheckText(tmpl, w, limits, text).message(),
                ::testing::HasSubstr(reason))
        << text;
  }
}

// The path of the user's spec in tests/data/templates/saxpy.toml (op
// saxpy_vec).
inline std::string SaxpySpecPath() {
  return SourceDir() + "/tests/data/templates/saxpy.toml";
}

// A user's spec of a new op, saxpy_val (y = 2x over N floats).
inline std::string SaxpySpecText() {
  return R"(name = "saxpy_val"
op = "saxpy_val"
dims = ["N"]
flops = "2 * N"
constraints = ["WG <= max_work_group_size"]
[knobs]
VW = [1, 2, 4]
WG = [16, 32, 64]
[[buffers]]
name = "x"
elements = "N"
[[buffers]]
name = "y"
elements = "N"
output = true
[kernel]
name = "saxpy"
global = ["ceil(N / (VW * WG)) * WG"]
local = ["WG"]
args = ["N", "float:2", "x", "y"]
[reference]
name = "saxpy_reference"
global = ["N"]
args = ["N", "float:2", "x", "y"]
)";
}

// Values 0.25 * ((i * 7 + offset) % 23) - 2.75 for i in [0, n): distinct
// small values, exactly representable; the inputs of data-op and eltwise
// template tests.
inline std::vector<float> Ramp(size_t n, int offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = 0.25f * static_cast<float>((i * 7 + offset) % 23) - 2.75f;
  }
  return v;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_TEMPLATE_FIXTURES_H_
