#include "kernels_templates/workload.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels_templates/builtin_templates.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

TEST(Workload, ParsesAndCanonicalises) {
  auto w = Workload::Parse("gemm", "K=7, N=5,M=3");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->Canonical(), "gemm M=3 N=5 K=7 fp32");
  EXPECT_EQ(w->ShapeString(), "M=3,N=5,K=7");
  EXPECT_EQ(w->dim("K"), 7);
  EXPECT_EQ(w->dim("X"), 0);
  EXPECT_EQ(w->Hash().size(), 16u);
  EXPECT_EQ(w->Hash(), Workload::Parse("gemm", "M=3 N=5 K=7")->Hash());
  EXPECT_NE(w->Hash(), Workload::Parse("gemm", "M=3,N=5,K=8")->Hash());
}

TEST(Workload, RejectsBadShapesNamingTheField) {
  struct Case {
    const char* op;
    const char* shape;
    const char* expect;
  };
  for (const Case& c : {
           Case{"gemm", "M=0,N=5,K=7", "dim M must be between 1"},
           Case{"gemm", "M=3,N=-5,K=7", "dim N must be between 1"},
           Case{"gemm", "M=3,N=5,K=4294967296", "dim K must be between 1"},
           Case{"gemm", "M=3,N=5", "missing dim K"},
           Case{"gemm", "M=3,N=5,K=7,Q=1", "no dim 'Q'"},
           Case{"gemm", "M=3,M=4,N=5,K=7", "given more than once"},
           Case{"gemm", "M=3,N=five,K=7", "non-integer value 'five'"},
           Case{"gemm", "M3,N=5,K=7", "bad shape token 'M3'"},
           Case{"gemm", "", "empty shape"},
           Case{"conv9d", "M=1", "unknown op 'conv9d'"},
       }) {
    auto w = Workload::Parse(c.op, c.shape);
    ASSERT_FALSE(w.ok()) << c.shape;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find(c.expect), absl::string_view::npos)
        << c.shape << " -> " << w.status();
  }
}

TEST(Workload, ExistingCanonicalStringsAndHashesAreUnchanged) {
  // Records are keyed by these: the ops of issue 35 (new eltwise fns, the
  // shape-product flag) must not move them. Hashes: FNV-1a of the text.
  const Workload e = *Workload::Parse(
      "eltwise", "C=16,H=24,W=96,fn=mul,b=channel,act=hardswish");
  EXPECT_EQ(e.Canonical(),
            "eltwise N=1 C=16 H=24 W=96 fp32 fn=mul b=channel act=hardswish");
  EXPECT_EQ(e.Hash(), "9c5402f6fdafc435");
  const Workload c = *Workload::Parse(
      "conv2d",
      "C=16,H=24,W=96,K=32,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
      "act=relu");
  EXPECT_EQ(c.Canonical(),
            "conv2d N=1 C=16 H=24 W=96 K=32 R=3 S=3 SH=1 SW=1 PH=1 PW=1 DH=1 "
            "DW=1 G=1 fp32 affine=scale_shift act=relu");
  EXPECT_EQ(c.Hash(), "ccdffbac1255562d");
  // fn=none stays the default, left out.
  EXPECT_EQ(Workload::Parse("eltwise", "C=3")->Canonical(),
            "eltwise N=1 C=3 H=1 W=1 fp32");
}

TEST(Workload, NewOpsReadAsTheContractSays) {
  const Workload copy = *Workload::Parse(
      "copy", "D0=2,D1=3,IS0=3,IS1=1,OS0=1,OS1=2,IE=6,OE=6", "fp16");
  EXPECT_EQ(copy.Canonical(),
            "copy D0=2 D1=3 D2=1 D3=1 D4=1 D5=1 IS0=3 IS1=1 IS2=0 IS3=0 IS4=0 "
            "IS5=0 IO=0 OS0=1 OS1=2 OS2=0 OS3=0 OS4=0 OS5=0 OO=0 IE=6 OE=6 "
            "fp16");
  EXPECT_EQ(Workload::Parse("fill", "E=5,O=2,OE=9")->Canonical(),
            "fill E=5 O=2 OE=9 fp32");
  EXPECT_EQ(Workload::Parse("reduce", "R=7,fn=logsumexp")->Canonical(),
            "reduce O=1 R=7 I=1 fp32 fn=logsumexp");
  EXPECT_EQ(Workload::Parse("eltwise", "C=3,fn=pow,b=scalar")->Canonical(),
            "eltwise N=1 C=3 H=1 W=1 fp32 fn=pow b=scalar");
  // Required dims, minimums.
  EXPECT_FALSE(Workload::Parse("copy", "D0=2,IE=2").ok());  // OE missing
  EXPECT_FALSE(Workload::Parse("copy", "D0=0,IE=1,OE=1").ok());
  EXPECT_FALSE(Workload::Parse("fill", "E=1,O=-1,OE=1").ok());
  EXPECT_FALSE(Workload::Parse("reduce", "O=2,I=2").ok());  // R missing
  // Strides, offsets and buffer sizes do not count in the 2^53 bound
  // (each still at most 2^31 - 1); the extents do.
  EXPECT_TRUE(Workload::Parse("copy",
                              "D0=2,D1=2,D2=2,IS0=2147483647,IS1=2147483647,"
                              "IS2=2147483647,OS0=2147483647,OS1=2147483647,"
                              "OS2=2147483647,IO=2147483647,OO=2147483647,"
                              "IE=2147483647,OE=2147483647")
                  .ok());
  EXPECT_TRUE(
      Workload::Parse("fill", "E=2147483647,O=2147483647,OE=2147483647").ok());
  auto big = Workload::Parse("copy", "D0=2097152,D1=2097152,D2=2049,IE=1,OE=1");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find(
                "the product of its dims D0*D1*D2*D3*D4*D5 exceeds 2^53"),
            absl::string_view::npos)
      << big.status();
  EXPECT_FALSE(Workload::Parse("copy", "D0=2,IE=2147483648,OE=2").ok());
}

// The built-in GEMM template.
const KernelTemplate& GemmTemplate() {
  return *FindTemplate("gemm", "gemm_tiled").value();
}

TEST(GemmTemplate, ConfigTextRoundTripsAndValidates) {
  const KernelTemplate& gemm = GemmTemplate();
  auto c = gemm.ParseConfig(
      "MWG=64,NWG=32,KWG=16,MWI=4,NWI=4,VW=2,SA=1,SB=0,KUNROLL=2,HALF=0,IMB=0");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(
      gemm.ConfigString(*c),
      "MWG=64,NWG=32,KWG=16,MWI=4,NWI=4,VW=2,SA=1,SB=0,KUNROLL=2,HALF=0,IMB=0");
  EXPECT_FALSE(gemm.ParseConfig("MWG=64").ok());  // missing knobs
  auto bad = gemm.ParseConfig(
      "MWG=48,NWG=32,KWG=16,MWI=4,NWI=4,VW=2,SA=1,SB=0,KUNROLL=2,HALF=0,IMB=0");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MWG=48 is outside"),
            absl::string_view::npos);
}

// One message names every problem of a config: each unknown knob, each
// value outside its knob's values and each missing knob, then the
// template's knobs.
TEST(GemmTemplate, ConfigErrorsNameEveryBadKnobAtOnce) {
  const KernelTemplate& gemm = GemmTemplate();
  const std::vector<Knob>& knobs = gemm.knobs();
  ASSERT_GE(knobs.size(), 4u);
  std::string all;
  for (const Knob& k : knobs) {
    absl::StrAppend(&all, all.empty() ? "" : ", ", k.name);
  }
  // Every knob but the first two.
  std::string given;
  for (size_t i = 2; i < knobs.size(); ++i) {
    absl::StrAppend(&given, given.empty() ? "" : ",", knobs[i].name, "=",
                    knobs[i].values[0]);
  }
  auto missing = gemm.ParseConfig(given);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      missing.status().message(),
      absl::StrCat("config is missing knobs ", knobs[0].name, ", ",
                   knobs[1].name, " (template gemm_tiled has ", all, ")"));

  // One missing knob, two unknown ones and a value outside its list.
  std::string mixed = absl::StrCat("FOO=1,", knobs[0].name, "=3,BAR=2");
  for (size_t i = 2; i < knobs.size(); ++i) {
    absl::StrAppend(&mixed, ",", knobs[i].name, "=", knobs[i].values[0]);
  }
  auto bad = gemm.ParseConfig(mixed);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            absl::StrCat("template gemm_tiled has no knobs 'FOO', 'BAR'; knob ",
                         knobs[0].name, "=3 is outside its values {",
                         absl::StrJoin(knobs[0].values, ","),
                         "}; config is missing knob ", knobs[1].name,
                         " (template gemm_tiled has ", all, ")"));
}

TEST(GemmTemplate, ConstraintsFollowDeviceLimits) {
  const KernelTemplate& gemm = GemmTemplate();
  const Workload w = *Workload::Parse("gemm", "M=64,N=64,K=64");
  DeviceLimits small{64, {64, 64, 64}, 4096, 1 << 30, 1};
  // 16x16 work-items: too many for a 64-item device.
  auto big_group = *gemm.ParseConfig(
      "MWG=16,NWG=16,KWG=8,MWI=1,NWI=1,VW=1,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0");
  auto s = gemm.CheckConfig(big_group, w, small);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("work-group size"), absl::string_view::npos);
  // 2 tiles of 32x64 floats = 16 KiB of local memory: over 4 KiB.
  auto big_local = *gemm.ParseConfig(
      "MWG=64,NWG=64,KWG=32,MWI=8,NWI=8,VW=4,SA=1,SB=1,KUNROLL=1,HALF=0,IMB=0");
  s = gemm.CheckConfig(big_local, w, small);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("local memory"), absl::string_view::npos);
  auto vw = *gemm.ParseConfig(
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=4,SA=0,SB=0,KUNROLL=1,HALF=0,IMB=0");
  EXPECT_FALSE(gemm.CheckConfig(vw, w, small).ok());  // VW must divide NWI
  auto ok = *gemm.ParseConfig(
      "MWG=16,NWG=16,KWG=8,MWI=2,NWI=2,VW=2,SA=1,SB=1,KUNROLL=2,HALF=0,IMB=0");
  EXPECT_TRUE(gemm.CheckConfig(ok, w, small).ok());
}

TEST(GemmTemplate, GeometryCoversEveryElement) {
  const KernelTemplate& gemm = GemmTemplate();
  auto c = *gemm.ParseConfig(
      "MWG=32,NWG=64,KWG=8,MWI=4,NWI=8,VW=4,SA=1,SB=1,KUNROLL=1,HALF=0,IMB=0");
  const Workload w = *Workload::Parse("gemm", "M=33,N=65,K=9");
  LaunchDesc l = gemm.Launch(c, w);
  // Work-groups of 8 (N) x 8 (M) work-items; ceil(65/64)=2 by ceil(33/32)=2.
  EXPECT_EQ(l.local, (std::vector<uint64_t>{8, 8}));
  EXPECT_EQ(l.global, (std::vector<uint64_t>{16, 16}));
  EXPECT_NE(l.build_options.find("-DEDGE_M=1"), std::string::npos);
  EXPECT_NE(l.build_options.find("-DEDGE_N=1"), std::string::npos);
  EXPECT_EQ(gemm.Flops(w), 2.0 * 33 * 65 * 9);
}

TEST(Registry, FindsByOpAndNameAndRejectsDuplicates) {
  auto by_op = FindTemplate("gemm", "");
  ASSERT_TRUE(by_op.ok());
  EXPECT_EQ((*by_op)->name(), "gemm_tiled");
  EXPECT_TRUE(FindTemplate("", "gemm_tiled").ok());
  auto missing = FindTemplate("gemm", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("gemm_tiled"),
            absl::string_view::npos);
  // The built-in spec of gemm_tiled, loaded again.
  auto read = [](const std::string& path) -> absl::StatusOr<std::string> {
    absl::StatusOr<absl::string_view> text = BuiltinFile(path);
    if (!text.ok()) return text.status();
    return std::string(*text);
  };
  auto again = SpecTemplate::Load("gemm/gemm_tiled.toml", read);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(RegisterTemplate(*std::move(again)).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace tunefleet::templates
