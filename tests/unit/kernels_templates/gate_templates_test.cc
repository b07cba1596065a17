// The channel gate template (channel_gate_direct, op channel_gate) off the
// device: the op's canonical strings, buffers, FLOPs and bytes, config
// checks and derived features (its kernels on the device:
// tests/integration/gate_template_test.cc).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using testing::CheckText;
using ::testing::HasSubstr;
using ::tunefleet::testing::GpuLimits;

const KernelTemplate& Gate() {
  return testing::BuiltinTemplate("channel_gate_direct");
}

TEST(ChannelGateOp, CanonicalStringAndDefaultTemplate) {
  const Workload w = testing::MustParse(
      "channel_gate", "C=96,H=20,W=20,R=24,act1=relu,act2=hardsigmoid");
  EXPECT_EQ(w.Canonical(),
            "channel_gate N=1 C=96 H=20 W=20 R=24 fp32 act1=relu "
            "act2=hardsigmoid");
  EXPECT_FALSE(
      Workload::Parse("channel_gate", "C=8,H=2,W=2,R=2,act1=gelu").ok());
  EXPECT_FALSE(Workload::Parse("channel_gate", "C=8,H=2,W=2").ok());  // no R
  auto t = FindTemplateFor(w, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->name(), "channel_gate_direct");
}

TEST(ChannelGateTemplate, BuffersFlopsAndBytes) {
  const Workload w = testing::MustParse(
      "channel_gate",
      "N=2,C=13,H=5,W=7,R=5,act1=relu,act2=hardsigmoid,residual=add");
  const std::vector<BufferDesc> b = Gate().Buffers(w);
  ASSERT_EQ(b.size(), 8u);
  const char* names[] = {"x",  "s",  "output", "w1",
                         "b1", "w2", "b2",     "residual"};
  const uint64_t elements[] = {910, 26, 910, 65, 5, 65, 13, 910};
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].name, names[i]);
    EXPECT_EQ(b[i].elements, elements[i]) << names[i];
    EXPECT_EQ(b[i].output, i == 2) << names[i];
  }
  // Per image: 4*R*C + R*(1 + relu's 1) + C*(1 + hardsigmoid's 2); per
  // element a multiply and the residual's add.
  EXPECT_EQ(Gate().Flops(w), 2.0 * (4 * 5 * 13 + 5 * 2 + 13 * 3) + 2 * 910);
  // x, output, residual, s and both weights in the storage type; the
  // biases fp32.
  EXPECT_EQ(Gate().Bytes(w), (3.0 * 910 + 26 + 2 * 65) * 4 + (5 + 13) * 4);
  const Workload half = testing::MustParse(
      "channel_gate", "C=13,H=5,W=7,R=5,act1=relu,act2=sigmoid", "fp16");
  EXPECT_EQ(Gate().Bytes(half), (2.0 * 455 + 13 + 2 * 65) * 2 + (5 + 13) * 4);
  EXPECT_EQ(Gate().Buffers(half).back().elements, 1u);  // residual unread
  EXPECT_EQ(Gate().Tolerance(half), 1e-2);
  EXPECT_EQ(Gate().Tolerance(w), 1e-4);
}

TEST(ChannelGateTemplate, ConfigConstraintsAndFeatures) {
  const DeviceLimits limits = GpuLimits();
  const Workload w = testing::MustParse(
      "channel_gate", "C=96,H=20,W=20,R=24,act1=relu,act2=hardsigmoid");
  auto check = [&](const Workload& x, const char* text) {
    return CheckText(Gate(), x, limits, text);
  };
  EXPECT_TRUE(check(w, "WG=256,VW=4,EPW=2,HSPLIT=8").ok());
  EXPECT_THAT(check(w, "WG=16,VW=1,EPW=1,HSPLIT=32").message(),
              HasSubstr("HSPLIT exceeds the work-group size"));
  EXPECT_THAT(check(w, "WG=64,VW=8,EPW=8,HSPLIT=1").message(),
              HasSubstr("VW*EPW"));
  EXPECT_THAT(
      CheckText(Gate(), w, GpuLimits(256), "WG=1024,VW=1,EPW=1,HSPLIT=1")
          .message(),
      HasSubstr("work-group size"));
  // A 1x1 map of 7 channels: 7 elements an image, chunks of at most 16.
  const Workload tiny = testing::MustParse(
      "channel_gate", "C=7,H=1,W=1,R=2,act1=relu,act2=sigmoid");
  EXPECT_TRUE(check(tiny, "WG=16,VW=1,EPW=1,HSPLIT=4").ok());
  EXPECT_THAT(check(tiny, "WG=32,VW=1,EPW=1,HSPLIT=1").message(),
              HasSubstr("rounded up"));
  EXPECT_THAT(check(tiny, "WG=16,VW=1,EPW=1,HSPLIT=16").message(),
              HasSubstr("C rounded up"));
  // s, h and the gates in local memory: C + R too large for 48 KiB.
  const Workload wide = testing::MustParse(
      "channel_gate", "C=16384,H=2,W=2,R=2048,act1=relu,act2=sigmoid");
  EXPECT_THAT(check(wide, "WG=256,VW=4,EPW=2,HSPLIT=8").message(),
              HasSubstr("local memory"));
  testing::ExpectSameFeatureNames(Gate(), w, limits,
                                  "WG=256,VW=4,EPW=2,HSPLIT=8",
                                  "WG=16,VW=1,EPW=1,HSPLIT=1");
}

const KernelTemplate& Block() {
  return testing::BuiltinTemplate("se_block_direct");
}

TEST(SeBlockTemplate, OpBuffersFlopsAndBytes) {
  const Workload w = testing::MustParse(
      "se_block",
      "N=2,C=13,H=5,W=7,R=5,act1=relu,act2=hardsigmoid,residual=add");
  EXPECT_EQ(w.Canonical(),
            "se_block N=2 C=13 H=5 W=7 R=5 fp32 act1=relu act2=hardsigmoid "
            "residual=add");
  auto t = FindTemplateFor(w, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->name(), "se_block_direct");
  // channel_gate's buffers without s.
  const std::vector<BufferDesc> b = Block().Buffers(w);
  ASSERT_EQ(b.size(), 7u);
  const char* names[] = {"x", "output", "w1", "b1", "w2", "b2", "residual"};
  const uint64_t elements[] = {910, 910, 65, 5, 65, 13, 910};
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].name, names[i]);
    EXPECT_EQ(b[i].elements, elements[i]) << names[i];
    EXPECT_EQ(b[i].output, i == 1) << names[i];
  }
  // channel_gate's flops and one add per element of an image for the pool;
  // its bytes without s.
  EXPECT_EQ(Block().Flops(w),
            2.0 * (455 + 4 * 5 * 13 + 5 * 2 + 13 * 3) + 2 * 910);
  EXPECT_EQ(Block().Bytes(w), (3.0 * 910 + 2 * 65) * 4 + (5 + 13) * 4);
}

TEST(SeBlockTemplate, ConfigConstraints) {
  const DeviceLimits limits = GpuLimits();
  // A 5x7 plane: 35 values a channel, 64 rounded up.
  const Workload w = testing::MustParse(
      "se_block", "C=13,H=5,W=7,R=5,act1=relu,act2=hardsigmoid");
  auto check = [&](const char* text) {
    return CheckText(Block(), w, limits, text);
  };
  EXPECT_TRUE(check("WG=64,VW=1,EPW=4,HSPLIT=4,PSPLIT=64").ok());
  EXPECT_THAT(check("WG=16,VW=1,EPW=1,HSPLIT=1,PSPLIT=32").message(),
              HasSubstr("PSPLIT exceeds the work-group size"));
  const Workload small = testing::MustParse(
      "se_block", "C=96,H=2,W=2,R=24,act1=relu,act2=hardsigmoid");
  EXPECT_THAT(
      CheckText(Block(), small, limits, "WG=64,VW=1,EPW=1,HSPLIT=1,PSPLIT=8")
          .message(),
      HasSubstr("PSPLIT exceeds H*W"));
  // The reference's private array of R hidden sums.
  EXPECT_THAT(Block()
                  .CheckWorkload(
                      testing::MustParse(
                          "se_block", "C=8,H=2,W=2,R=5000,act1=relu,act2=relu"),
                      limits)
                  .message(),
              HasSubstr("R > 4096"));
}

}  // namespace
}  // namespace tunefleet::templates
