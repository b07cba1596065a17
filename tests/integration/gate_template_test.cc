// The channel gate templates (channel_gate_direct, op channel_gate, and
// se_block_direct, op se_block: the same with s pooled from x in the
// kernel) on the OpenCL device (PoCL in CI): each one's reference and
// chosen tuned configs
// against a computation on the host from inputs the test writes (every
// activation of act1 and act2, residual=add, C not a multiple of the vector
// width, R dividing nothing), then random configs and fp16 storage against
// the reference (its logic off the device:
// tests/unit/kernels_templates/gate_templates_test.cc).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/host_activation.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::IsEmpty;

// The template under test: channel_gate_direct or se_block_direct.
class GateOnDevice : public ::testing::TestWithParam<const char*> {
 protected:
  const KernelTemplate& Gate() const {
    return testing::BuiltinTemplate(GetParam());
  }
  bool Pooled() const { return Gate().op() == "se_block"; }
};

// Values 0.125 * ((i * 7 + offset) % 23) - 1.375: distinct small values.
std::vector<float> GateRamp(size_t n, int offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = 0.125f * static_cast<float>((i * 7 + offset) % 23) - 1.375f;
  }
  return v;
}

// The inputs of `w` and the output the host computes from them.
struct Case {
  std::map<std::string, std::vector<float>> data;
  std::vector<float> floats;
  std::vector<float> expected;
};

// se_block (op se_block): s is x's mean per channel, not an input.
Case MakeCase(const Workload& w, float a1, float b1, float a2, float b2) {
  const int64_t n = w.dim("N"), c = w.dim("C"), r = w.dim("R");
  const int64_t hw = w.dim("H") * w.dim("W");
  const bool residual = w.attr("residual") == "add";
  const bool pooled = w.op() == "se_block";
  Case k;
  const std::vector<float> x = GateRamp(n * c * hw), w1 = GateRamp(r * c, 5),
                           bias1 = GateRamp(r, 11), w2 = GateRamp(c * r, 13),
                           bias2 = GateRamp(c, 17),
                           res = GateRamp(residual ? n * c * hw : 1, 19);
  std::vector<float> s = GateRamp(n * c, 3);
  if (pooled) {
    for (int64_t p = 0; p < n * c; ++p) {
      double sum = 0;
      for (int64_t e = 0; e < hw; ++e) sum += x[p * hw + e];
      s[p] = static_cast<float>(sum / hw);
    }
  }
  k.data = {{"x", x},   {"w1", w1},    {"b1", bias1},
            {"w2", w2}, {"b2", bias2}, {"residual", res}};
  if (!pooled) k.data["s"] = s;
  k.floats = {a1, b1, a2, b2};
  k.expected.resize(x.size());
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> h(r);
    for (int64_t u = 0; u < r; ++u) {
      double acc = bias1[u];
      for (int64_t q = 0; q < c; ++q) acc += w1[u * c + q] * s[i * c + q];
      h[u] = testing::HostActivation<double>(w.attr("act1"), acc, a1, b1);
    }
    for (int64_t q = 0; q < c; ++q) {
      double acc = bias2[q];
      for (int64_t u = 0; u < r; ++u) acc += w2[q * r + u] * h[u];
      const double g =
          testing::HostActivation<double>(w.attr("act2"), acc, a2, b2);
      for (int64_t e = 0; e < hw; ++e) {
        const int64_t at = (i * c + q) * hw + e;
        k.expected[at] =
            static_cast<float>(x[at] * g + (residual ? res[at] : 0.0));
      }
    }
  }
  return k;
}

// max|out - expected| / max|expected|.
double RelError(const std::vector<float>& out,
                const std::vector<float>& expected) {
  if (out.size() != expected.size()) return 1e30;
  double err = 0, ref = 1e-30;
  for (size_t i = 0; i < out.size(); ++i) {
    err = std::max(err, std::fabs(double{out[i]} - expected[i]));
    ref = std::max(ref, std::fabs(double{expected[i]}));
  }
  return err / ref;
}

// C = 13 (no vector width divides it), R = 5 (divides nothing), planes of
// 35 and of 4, two images, a 1x1 plane.
constexpr const char* kShapes[] = {"C=13,H=5,W=7,R=5", "N=2,C=6,H=2,W=2,R=3",
                                   "N=2,C=7,H=1,W=1,R=2", "C=24,H=9,W=16,R=6"};
// Chosen configs: one work-item per hidden unit and split sums, vectors
// across plane borders, chunks of many planes and of part of one; for
// se_block each with its PSPLIT (one work-item a channel's plane, or
// split sums).
constexpr const char* kConfigs[] = {
    "WG=16,VW=1,EPW=1,HSPLIT=1", "WG=32,VW=4,EPW=2,HSPLIT=4",
    "WG=64,VW=8,EPW=1,HSPLIT=16", "WG=16,VW=2,EPW=4,HSPLIT=2"};
constexpr const char* kPoolSplits[] = {",PSPLIT=4", ",PSPLIT=1", ",PSPLIT=8",
                                       ",PSPLIT=2"};

TEST_P(GateOnDevice, ReferenceAndConfigsMatchHost) {
  const DeviceLimits limits = testing::DeviceLimits();
  const char* acts[][2] = {{"relu", "hardsigmoid"}, {"none", "sigmoid"},
                           {"clip", "hardswish"},   {"leakyrelu", "silu"},
                           {"silu", "relu"},        {"hardsigmoid", "clip"}};
  int k = 0, ran = 0;
  for (const char* shape : kShapes) {
    for (const char* residual : {"none", "add"}) {
      const auto& act = acts[k++ % 6];
      const Workload w = testing::MustParse(
          Gate().op(), absl::StrCat(shape, ",act1=", act[0], ",act2=", act[1],
                                    ",residual=", residual));
      // Parameters away from the tuning defaults: the floats are read.
      const std::string a1 = act[0], a2 = act[1];
      const float p1a = a1 == "clip" ? -0.5f : a1 == "leakyrelu" ? 0.1f : 0.3f;
      const float p1b = a1 == "clip" ? 0.75f : 0.4f;
      const float p2a = a2 == "clip" ? -1.0f : 0.1666667f;
      const float p2b = a2 == "clip" ? 0.5f : 0.5f;
      const Case c = MakeCase(w, p1a, p1b, p2a, p2b);
      EXPECT_LT(RelError(testing::RunReferenceOn(Gate(), w, c.data, c.floats),
                         c.expected),
                1e-5)
          << w.Canonical() << " reference";
      // One chosen config a case (each one on several shapes): PoCL
      // builds a program a config.
      const std::string config =
          absl::StrCat(kConfigs[k % 4], Pooled() ? kPoolSplits[k % 4] : "");
      absl::StatusOr<KnobValues> knobs = Gate().ParseConfig(config);
      ASSERT_TRUE(knobs.ok()) << knobs.status();
      if (!Gate().CheckConfig(*knobs, w, limits).ok()) continue;
      ++ran;
      EXPECT_LT(
          RelError(testing::RunConfigOn(Gate(), w, config, c.data, c.floats),
                   c.expected),
          1e-5)
          << w.Canonical() << " " << config;
    }
  }
  EXPECT_GE(ran, 5);  // configs the small shapes prune are skipped
}

TEST_P(GateOnDevice, RandomConfigsMatchReference) {
  const std::vector<Workload> shapes = {
      testing::MustParse(Gate().op(),
                         "C=13,H=5,W=7,R=5,act1=relu,act2=hardsigmoid"),
      testing::MustParse(Gate().op(),
                         "N=2,C=7,H=1,W=1,R=2,act1=relu,act2=sigmoid,"
                         "residual=add"),
      // A PP-OCRv4 det block: 96 channels, a 20x20 map, 24 hidden units.
      testing::MustParse(Gate().op(),
                         "C=96,H=20,W=20,R=24,act1=relu,act2=hardsigmoid,"
                         "residual=add")};
  EXPECT_THAT(testing::CheckRandomConfigs(Gate(), shapes, 2, 701), IsEmpty());
}

TEST_P(GateOnDevice, HalfStorageMatchesReference) {
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          Gate(),
          {testing::MustParse(Gate().op(),
                              "N=2,C=13,H=5,W=7,R=5,act1=relu,act2=hardsigmoid",
                              "fp16"),
           testing::MustParse(
               Gate().op(),
               "C=24,H=9,W=16,R=6,act1=relu,act2=sigmoid,residual=add",
               "fp16")},
          2, 801),
      IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Templates, GateOnDevice,
                         ::testing::Values("channel_gate_direct",
                                           "se_block_direct"));

}  // namespace
}  // namespace tunefleet::templates
