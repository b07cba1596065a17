// Users' templates from declarative specs (TOML or JSON), off the device:
// parsing, refusals by field, built-in specs, expressions and registration.
#include "kernels_templates/spec/spec_template.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <latch>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/expression.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/template_fixtures.h"

namespace tunefleet::templates {
namespace {

using ::testing::HasSubstr;

TEST(SpecTemplate, BadSpecsNameWhatIsWrong) {
  const std::string ok_kernel =
      "[kernel]\nname = \"k\"\nglobal = [\"N\"]\nargs = [\"N\", \"y\"]\n"
      "[reference]\nname = \"r\"\nglobal = [\"N\"]\nargs = [\"N\", \"y\"]\n";
  const std::string head =
      "name = \"t\"\nop = \"spec_test_op\"\ndims = [\"N\"]\nflops = \"N\"\n";
  const std::string knobs = "[knobs]\nA = [1, 2]\n";
  const std::string buffers =
      "[[buffers]]\nname = \"y\"\nelements = \"N\"\noutput = true\n";
  struct Case {
    std::string spec;
    const char* message;
  };
  for (const Case& c : {
           Case{"name = ", "TOML error at line 1"},
           Case{"op = \"x\"\n", "missing field \"name\""},
           Case{head + buffers + ok_kernel, "missing table \"knobs\""},
           Case{head + knobs + ok_kernel, "missing [[buffers]]"},
           Case{head + knobs + "[[buffers]]\nname = \"y\"\nelements = \"N\"\n" +
                    ok_kernel,
                "no buffer has output = true"},
           Case{head + knobs + buffers +
                    "[kernel]\nname = \"k\"\nglobal = [\"N * B\"]\n"
                    "[reference]\nname = \"r\"\nglobal = [\"N\"]\n",
                "kernel.global: expression 'N * B'"},
           Case{
               head + "constraints = [\"A <\"]\n" + knobs + buffers + ok_kernel,
               "constraints: expression 'A <'"},
           Case{"name = \"t\"\nop = \"spec_new_op\"\nflops = \"1\"\n" + knobs +
                    buffers + ok_kernel,
                "op spec_new_op is new: give its \"dims\""},
           Case{"name = \"t\"\nop = \"gemm\"\ndims = [\"X\"]\nflops = \"1\"\n" +
                    knobs + buffers + ok_kernel,
                "op gemm exists with dims M,N,K"},
           Case{head + "[knobs]\nA = [1.5]\n" + buffers + ok_kernel,
                "knob A: values must be integers"},
       }) {
    auto t = SpecTemplate::Parse(c.spec, "toml", "__kernel void k() {}");
    ASSERT_FALSE(t.ok()) << c.spec;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message))
        << c.spec;
  }
  EXPECT_EQ(SpecTemplate::Load("/nonexistent.toml").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SpecTemplate, RegisteringTwiceReturnsTheSameTemplate) {
  auto loaded = SpecTemplate::Load(testing::SaxpySpecPath());
  ASSERT_TRUE(loaded.ok());
  const std::string source((*loaded)->source());
  auto a = RegisterSpecTemplate((*loaded)->spec_text(), "toml", source);
  auto b = RegisterSpecTemplate((*loaded)->spec_text(), "toml", source);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(*a, *b);
  auto other = RegisterSpecTemplate((*loaded)->spec_text(), "toml",
                                    source + "\n// changed\n");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  auto w = Workload::Parse("saxpy", "N=64");
  ASSERT_TRUE(w.ok());
  auto found = FindTemplateFor(*w, "");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->name(), "saxpy_vec");
}

// The fields the built-in specs use, on a user's spec of an existing op
// with an attribute (global_pool's mode).
constexpr char kFieldsSpec[] = R"spec(
name = "spec_fields_test"
op = "global_pool"
version = 3
dtypes = ["fp16"]
launch_checks = false
config_rechecks_workload = true
knobs = [
  { name = "WG", values = [64, 32, 128] },
  { name = "A", values = [2, 1] },
]
let = [
  { name = "planes", value = "N * C" },
  { name = "twice", value = "2 * planes" },
]
accepts = { expression = "H == W", reason = "{template} takes square planes, not {workload}" }
workload_checks = [
  { expression = "planes <= 100", reason = "{workload}: {planes} planes > 100" },
]
constraints = [
  { expression = "WG % 64 == 0", reason = "WG is not a multiple of 64" },
  "A <= 1",
]
features = [
  { name = "log2_wg", value = "log2(WG)" },
  { name = "mode_number", value = "mode" },
]
flops = "twice"

[attrs]
mode = { max = 0, avg = 7 }

[[buffers]]
name = "x"
elements = "planes * H * W"
dtype = "workload"

[[buffers]]
name = "scale"
elements = "C"
seed = 9

[[buffers]]
name = "y"
elements = "planes"
output = true
dtype = "workload"

[kernel]
name = "k"
global = ["WG * planes"]
local = ["WG"]
args = ["N", "x", "scale", "y", "float:mode / 2"]
options = ["-DWG={WG}", { text = " -DAVG=1", when = "mode == 7" }, " -DNAME={template}"]

[reference]
name = "r"
global = ["planes"]
args = ["N", "x", "scale", "y", "float:0"]
)spec";

Workload GlobalPool(const char* shape, const char* dtype = "fp16") {
  return *Workload::Parse("global_pool", shape, dtype);
}

TEST(SpecTemplate, ReadsTheFieldsOfBuiltInSpecs) {
  auto t = SpecTemplate::Parse(kFieldsSpec, "toml", "kernel void k() {}");
  ASSERT_TRUE(t.ok()) << t.status();
  const SpecTemplate& spec = **t;
  EXPECT_EQ(spec.version(), 3);
  ASSERT_EQ(spec.knobs().size(), 2u);  // in the order listed
  EXPECT_EQ(spec.knobs()[0].name, "WG");
  EXPECT_EQ(spec.knobs()[0].values, (std::vector<int64_t>{32, 64, 128}));
  const Workload avg = GlobalPool("N=2,C=3,H=4,W=4,mode=avg");
  const Workload wide = GlobalPool("N=2,C=3,H=4,W=5");
  EXPECT_TRUE(spec.Accepts(avg));
  EXPECT_FALSE(spec.Accepts(wide));
  EXPECT_FALSE(spec.Accepts(GlobalPool("C=3,H=4,W=4", "fp32")));  // dtypes
  const DeviceLimits limits = testing::GpuLimits();
  EXPECT_EQ(spec.CheckWorkload(wide, limits).message(),
            "spec_fields_test takes square planes, not " + wide.Canonical());
  const Workload many = GlobalPool("C=200,H=2,W=2");
  EXPECT_EQ(spec.CheckWorkload(many, limits).message(),
            many.Canonical() + ": 200 planes > 100");
  auto check = [&](const Workload& w, const char* config) {
    return std::string(
        spec.CheckConfig(*spec.ParseConfig(config), w, limits).message());
  };
  EXPECT_EQ(check(avg, "WG=32,A=1"), "WG=32,A=1: WG is not a multiple of 64");
  EXPECT_EQ(check(avg, "WG=64,A=2"), "WG=64,A=2: violates 'A <= 1'");
  EXPECT_EQ(check(avg, "WG=64,A=1"), "");
  // config_rechecks_workload: the workload's reasons come first.
  EXPECT_THAT(check(wide, "WG=64,A=1"), HasSubstr("takes square planes"));

  const std::vector<BufferDesc> buffers = spec.Buffers(avg);
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[0].elements, 6u * 16);
  EXPECT_EQ(buffers[0].dtype, templates::Dtype::kFp16);
  EXPECT_EQ(buffers[0].seed, 1u);
  EXPECT_EQ(buffers[1].dtype, templates::Dtype::kFp32);
  EXPECT_EQ(buffers[1].seed, 9u);
  EXPECT_EQ(buffers[2].seed, 0u);
  EXPECT_EQ(spec.Flops(avg), 12);
  EXPECT_EQ(spec.Tolerance(avg), 1e-2);

  const KnobValues config = *spec.ParseConfig("WG=64,A=1");
  const LaunchDesc l = spec.Launch(config, avg);
  EXPECT_EQ(l.global, (std::vector<uint64_t>{64 * 6}));
  EXPECT_EQ(l.build_options, "-DWG=64 -DAVG=1 -DNAME=spec_fields_test");
  EXPECT_EQ(spec.Launch(config, GlobalPool("N=2,C=3,H=4,W=4")).build_options,
            "-DWG=64 -DNAME=spec_fields_test");
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_FLOAT_EQ(l.args[4].real, 3.5f);  // mode avg = 7, over 2
  const std::vector<Feature> features =
      spec.DerivedFeatures(config, avg, limits);
  ASSERT_EQ(features.size(), 2u);
  EXPECT_EQ(features[0].name, "log2_wg");
  EXPECT_DOUBLE_EQ(features[0].value, 6);
  EXPECT_DOUBLE_EQ(features[1].value, 7);
}

TEST(SpecTemplate, BadNewFieldsNameWhatIsWrong) {
  const std::string spec = kFieldsSpec;
  auto with = [&](const std::string& from, const std::string& to) {
    EXPECT_NE(spec.find(from), std::string::npos) << from;
    return absl::StrReplaceAll(spec, {{from, to}});
  };
  struct Case {
    std::string spec;
    const char* message;
  };
  for (const Case& c : {
           Case{with("\"2 * planes\"",
                     "\"2 * later\" }, { name = \"later\", "
                     "value = \"1\""),
                "let twice: reads later, which is not defined before it"},
           Case{with("mode = {", "flavour = {"),
                "attrs: op global_pool has no attribute 'flavour'"},
           Case{with(", avg = 7 }", " }"),
                "attrs.mode: give a number for each of max, avg"},
           Case{with("not a multiple of 64", "{WG"),
                "constraints.reason: '{' without '}'"},
           Case{with("{ text = \" -DAVG=1\",", "{ txt = \" -DAVG=1\","),
                "kernel.options: each piece is text or {text, when}"},
           Case{with("version = 3", "shape_generic = true"),
                "shape_generic: give the default_config"},
           Case{with("version = 3", "default_config = \"WG=64,B=1\""),
                "default_config: template spec_fields_test has no knob 'B'"},
           Case{with("[\"fp16\"]", "[\"fp64\"]"),
                "dtypes: op global_pool has no dtype 'fp64'"},
           Case{with("\"A <= 1\"", "\"A = 1\""), "assigns; it may not"},
           Case{with("\"A <= 1\"", "\"A, 1\""), "gives several values"},
           Case{with("seed = 9", "dtype = \"fp8\""),
                "buffer scale: dtype must be \"fp32\" or \"workload\""},
           Case{with("seed = 9", "fill = \"ones\""),
                "buffer scale: fill must be \"uniform\" or \"zero\""},
           Case{with("seed = 9", "fill = \"zero\""),
                "buffer y follows scratch buffer scale: fill = \"zero\" "
                "buffers come last"},
           Case{with("output = true\ndtype",
                     "output = true\nfill = \"zero\"\ndtype"),
                "buffer y: an output is verified"},
           Case{with("name = \"r\"", "name = \"r\"\nsource = \"r.cl\""),
                "reference.source: the reference's own source text is "
                "missing"},
           Case{with("{ name = \"A\", values", "{ values"),
                "knobs: each item needs a name and values"},
       }) {
    auto t = SpecTemplate::Parse(c.spec, "toml", "kernel void k() {}");
    ASSERT_FALSE(t.ok()) << c.message;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message));
  }
}

// The built-in specs are files in the format users write: loaded from the
// source tree (their preambles found among the library's files), each is
// the registry's template.
TEST(SpecTemplate, BuiltInSpecFilesLoadLikeUsersSpecs) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           testing::SourceDir() + "/kernels_templates")) {
    if (entry.path().extension() != ".toml") continue;
    auto t = SpecTemplate::Load(entry.path().string());
    ASSERT_TRUE(t.ok()) << entry.path() << ": " << t.status();
    auto registered = FindTemplate("", (*t)->name());
    ASSERT_TRUE(registered.ok()) << registered.status();
    EXPECT_EQ((*t)->SourceHash(), (*registered)->SourceHash());
    EXPECT_EQ((*t)->knobs().size(), (*registered)->knobs().size());
    ++loaded;
  }
  // Every kernels_templates/*/*.toml (gate/ since issue 36: channel_gate
  // and se_block).
  EXPECT_EQ(loaded, 23);
}

TEST(Expressions, FollowMuParserAndPrintAsCxx) {
  auto set = ExpressionSet::Create({"x", "y", "z"});
  ASSERT_TRUE(set.ok()) << set.status();
  const double slots[] = {5, 3, 0};
  auto value = [&](const char* e) {
    absl::StatusOr<int> h = (*set)->Add(e, "test");
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? (*set)->Evaluate(*h, slots) : NAN;
  };
  EXPECT_EQ(value("-2^2"), -4);    // the sign binds after ^
  EXPECT_EQ(value("2^3^2"), 512);  // ^ is right-associative
  EXPECT_EQ(value("x % y"), 2);
  EXPECT_TRUE(std::isnan(value("x % z")));  // zero divisor: NaN
  EXPECT_EQ(value("x > 1 ? y : z + 1"), 3);
  EXPECT_EQ(value("x < 1 ? y : z < 1 ? 7 : 8"), 7);
  EXPECT_EQ(value("min(x, y, 4) + max(z, 1)"), 4);
  EXPECT_EQ(value("x / 2 + floor(x / 2) + ceil(x / 2) + trunc(-x / 2)"), 5.5);
  EXPECT_EQ(value("x && z || y"), 1);
  EXPECT_EQ(value("log2(1024) + sqrt(16)"), 14);
  absl::StatusOr<int> h = (*set)->Add("x % y == 0 ? -x : 2", "test");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*set)->ToCxx(*h, [](int i) { return absl::StrCat("v", i); }),
            "((tunefleet_expr::Mod(v0, v1) == 0.0 ? 1.0 : 0.0) != 0 ? "
            "tunefleet_expr::Neg(v0) : 2.0)");
  EXPECT_EQ((*set)->Reads(*h), (std::vector<int>{0, 1}));
  EXPECT_FALSE((*set)->Add("w + 1", "test").ok());  // unknown variable
}

// Every config of `tmpl`'s knobs (the raw search space).
std::vector<KnobValues> AllConfigs(const KernelTemplate& tmpl) {
  std::vector<KnobValues> configs(1);
  for (const Knob& k : tmpl.knobs()) {
    std::vector<KnobValues> more;
    for (const KnobValues& c : configs) {
      for (int64_t v : k.values) {
        more.push_back(c);
        more.back().push_back(v);
      }
    }
    configs = std::move(more);
  }
  return configs;
}

// Checking configs takes no lock and keeps no state: threads checking the
// same template at once agree with one thread alone.
TEST(SpecTemplate, ChecksConfigsFromManyThreads) {
  const KernelTemplate& gemm = *FindTemplate("gemm", "gemm_tiled").value();
  const Workload w = *Workload::Parse("gemm", "M=100,N=37,K=19");
  const DeviceLimits limits = testing::GpuLimits();
  const std::vector<KnobValues> configs = AllConfigs(gemm);
  auto count_valid = [&] {
    size_t valid = 0;
    for (const KnobValues& c : configs) {
      if (gemm.CheckConfig(c, w, limits).ok()) {
        ++valid;
        EXPECT_EQ(gemm.DerivedFeatures(c, w, limits).size(), 11u);
      }
    }
    return valid;
  };
  const size_t alone = count_valid();
  EXPECT_GT(alone, 0u);
  std::vector<size_t> counts(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < counts.size(); ++i) {
    threads.emplace_back([&, i] { counts[i] = count_valid(); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t c : counts) EXPECT_EQ(c, alone);
}

// ConfigValid() (what a search space is enumerated with) accepts exactly
// the configs CheckConfig() accepts: templates with constraints only and
// one with the OpenCL launch rules, on a device with small limits so that
// both kinds reject some configs.
TEST(SpecTemplate, ConfigValidAgreesWithCheckConfig) {
  DeviceLimits small = testing::GpuLimits();
  small.max_work_group_size = 64;
  small.max_work_item_sizes = {64, 64, 64};
  small.local_mem_bytes = 8192;
  const std::pair<const KernelTemplate*, Workload> cases[] = {
      {&testing::BuiltinTemplate("gemm_tiled"),
       testing::MustParse("gemm", "M=100,N=37,K=19")},
      {&testing::BuiltinTemplate("gemm_gpu"),
       testing::MustParse("gemm", "M=256,N=256,K=64")},
      {&testing::Pool2dDirect(),
       testing::MustParse("pool2d",
                          "C=6,H=13,W=19,R=3,S=3,PH=1,PW=1,mode=avg")},
  };
  for (const auto& [tmpl, w] : cases) {
    const std::vector<KnobValues> configs = AllConfigs(*tmpl);
    size_t valid = 0;
    for (const KnobValues& c : configs) {
      const bool checked = tmpl->CheckConfig(c, w, small).ok();
      ASSERT_EQ(tmpl->ConfigValid(c, w, small), checked)
          << tmpl->name() << " " << tmpl->ConfigString(c);
      valid += checked;
    }
    EXPECT_GT(valid, 0u) << tmpl->name();
    EXPECT_LT(valid, configs.size()) << tmpl->name();
  }
  // A config of the wrong length is no valid config either.
  const KernelTemplate& gemm = testing::BuiltinTemplate("gemm_tiled");
  EXPECT_FALSE(
      gemm.ConfigValid({16}, testing::MustParse("gemm", "M=8,N=8,K=8"), small));
}

// Registering the same spec from many threads at once: every call gets the
// one template (registry.h), and its new op is added once.
TEST(Registry, ConcurrentIdenticalRegistrationsAllSucceed) {
  auto loaded = SpecTemplate::Load(testing::SaxpySpecPath());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string source((*loaded)->source());
  constexpr int kThreads = 16;
  for (int round = 0; round < 100; ++round) {
    const std::string spec = absl::StrReplaceAll(
        (*loaded)->spec_text(),
        {{"name = \"saxpy_vec\"", absl::StrCat("name = \"race_", round, "\"")},
         {"op = \"saxpy\"", absl::StrCat("op = \"race_op_", round, "\"")}});
    std::latch start(kThreads);
    std::vector<absl::StatusOr<const KernelTemplate*>> results(
        kThreads, absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] = RegisterSpecTemplate(spec, "toml", source);
      });
    }
    for (std::thread& t : threads) t.join();
    for (const auto& r : results) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(*r, *results[0]);
    }
    const std::vector<absl::string_view> ops = KnownOps();
    EXPECT_EQ(
        std::count(ops.begin(), ops.end(), absl::StrCat("race_op_", round)), 1);
  }
}

TEST(Registry, ConcurrentRegistrationsOfOneOpAllSucceed) {
  constexpr int kThreads = 16;
  for (int round = 0; round < 100; ++round) {
    const std::string name = absl::StrCat("op_race_", round);
    OpSpec op;
    op.name = name;
    op.dims = {{"N", {}}};
    std::latch start(kThreads);
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        ok += RegisterOp(op).ok();
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(ok.load(), kThreads);
    const std::vector<absl::string_view> ops = KnownOps();
    EXPECT_EQ(std::count(ops.begin(), ops.end(), name), 1);
  }
}

}  // namespace
}  // namespace tunefleet::templates
