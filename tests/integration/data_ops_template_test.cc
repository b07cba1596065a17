// The templates of the ops that move and reduce data (issue 35):
// copy_strided (op copy), fill_range (op fill) and reduce_axis (op reduce)
// on the OpenCL device (PoCL in CI): random and chosen configs against each
// template's naive reference on the agent's buffers (outputs that a copy or
// fill writes only in part included), fp16 storage, and each reference
// against a computation on the host from inputs the test writes: a rank-5
// transpose, a slice with steps, a concat of three inputs into one output,
// an expand with stride 0, every reduce fn over O x R x I. And the
// verification itself: a candidate that writes outside its box, or too
// little of it, is a WRONG_ANSWER.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "tests/data/consumer_support/host_reduce.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::IsEmpty;
using testing::Ramp;

// A copy of a box: extents (up to 6, the last the innermost), strides and
// offsets, buffer sizes.
struct Box {
  std::vector<int64_t> d, is, os;
  int64_t io = 0, oo = 0, ie = 0, oe = 0;
};

// The copy workload of `b`, its dims right-aligned into D0..D5 (missing
// leading dims extent 1, stride 0).
Workload CopyWorkload(const Box& b, const char* dtype = "fp32") {
  std::vector<std::string> parts;
  const size_t lead = 6 - b.d.size();
  for (size_t k = 0; k < b.d.size(); ++k) {
    parts.push_back(absl::StrCat("D", lead + k, "=", b.d[k]));
    parts.push_back(absl::StrCat("IS", lead + k, "=", b.is[k]));
    parts.push_back(absl::StrCat("OS", lead + k, "=", b.os[k]));
  }
  parts.push_back(
      absl::StrCat("IO=", b.io, ",OO=", b.oo, ",IE=", b.ie, ",OE=", b.oe));
  return testing::MustParse("copy", absl::StrJoin(parts, ","), dtype);
}

// The copy on the host: `out` with the box of `in` written into it.
std::vector<float> HostCopy(const Box& b, const std::vector<float>& in,
                            std::vector<float> out) {
  const size_t rank = b.d.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t total = 1;
  for (int64_t e : b.d) total *= e;
  for (int64_t t = 0; t < total; ++t) {
    int64_t rest = t, src = b.io, dst = b.oo;
    for (size_t k = rank; k-- > 0;) {
      const int64_t i = rest % b.d[k];
      rest /= b.d[k];
      src += i * b.is[k];
      dst += i * b.os[k];
    }
    out[dst] = in[src];
  }
  return out;
}

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size() - 1; k-- > 0;) s[k] = s[k + 1] * shape[k + 1];
  return s;
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t p = 1;
  for (int64_t e : shape) p *= e;
  return p;
}

// Transpose of `shape` by `perm` (output axis k is input axis perm[k]).
Box Transpose(const std::vector<int64_t>& shape, const std::vector<int>& perm) {
  Box b;
  const std::vector<int64_t> in_strides = Strides(shape);
  for (int p : perm) {
    b.d.push_back(shape[p]);
    b.is.push_back(in_strides[p]);
  }
  b.os = Strides(b.d);
  b.ie = b.oe = Product(shape);
  return b;
}

// The boxes the checks below use, each a lowering the graph makes.
std::vector<Box> LoweringBoxes() {
  std::vector<Box> boxes;
  // Transpose of rank 5, perm (2, 0, 3, 1, 4).
  boxes.push_back(Transpose({2, 3, 4, 5, 6}, {2, 0, 3, 1, 4}));
  // NCHW -> NHWC: the output's innermost dim reads with stride H*W.
  boxes.push_back(Transpose({1, 13, 7, 9}, {0, 2, 3, 1}));
  // Slice of a 7 x 9 input: rows 1:7:2, columns 2:9:3.
  boxes.push_back({{3, 3}, {18, 3}, {3, 1}, 11, 0, 63, 9});
  // Expand (3, 1) -> (3, 4), and (1, 5) -> (4, 5): strides 0.
  boxes.push_back({{3, 4}, {1, 0}, {4, 1}, 0, 0, 3, 12});
  boxes.push_back({{4, 5}, {0, 1}, {5, 1}, 0, 0, 5, 20});
  // One input of a concat along axis 1: (2, 3, 37) into (2, 8, 37) at
  // channel 2; the output's other channels are left as they are.
  boxes.push_back({{2, 3, 37}, {111, 37, 1}, {296, 37, 1}, 0, 74, 222, 592});
  // Pad's interior: a 5 x 6 input into the middle of 9 x 10.
  boxes.push_back({{5, 6}, {6, 1}, {10, 1}, 0, 2 * 10 + 2, 30, 90});
  // A row with an input offset (Split's second part) and six dims.
  boxes.push_back({{2, 1, 3, 2, 2, 11},
                   {600, 0, 100, 50, 20, 1},
                   {264, 264, 88, 44, 22, 1},
                   7,
                   0,
                   1400,
                   528});
  return boxes;
}

// ------------------------------------------------------------------ copy

TEST(CopyOnDevice, RandomConfigsMatchReference) {
  std::vector<Workload> workloads;
  for (const Box& b : LoweringBoxes()) workloads.push_back(CopyWorkload(b));
  // A long contiguous row (vectors), one element.
  workloads.push_back(testing::MustParse(
      "copy", "D4=3,D5=1000,IS4=1000,IS5=1,OS4=1003,OS5=1,IE=3000,OE=3009"));
  workloads.push_back(testing::MustParse("copy", "IE=1,OE=1"));
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::CopyStrided(), workloads, 2, 101),
      IsEmpty());
}

TEST(CopyOnDevice, ChosenConfigsMatchReference) {
  // Vector tails of rows (D5 = 37, 11), vectors that gather (IS5 = 3) and
  // broadcast (IS5 = 0), unaligned offsets, several vectors a work-item.
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::CopyStrided(),
          {testing::MustParse("copy",
                              "D4=5,D5=37,IS4=120,IS5=3,OS4=40,OS5=1,IO=1,"
                              "OO=3,IE=600,OE=203"),
           testing::MustParse("copy",
                              "D4=9,D5=21,IS4=1,IS5=0,OS4=21,OS5=1,"
                              "OO=5,IE=9,OE=194")},
          {"WG=1,VW=8,EPW=4", "WG=4,VW=4,EPW=2", "WG=8,VW=2,EPW=8"}),
      IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(testing::CopyStrided(),
                                    {CopyWorkload(LoweringBoxes()[7])},
                                    {"WG=16,VW=1,EPW=1", "WG=32,VW=8,EPW=1"}),
              IsEmpty());
}

TEST(CopyOnDevice, HalfStorageMatchesReference) {
  std::vector<Workload> workloads;
  for (const Box& b : LoweringBoxes()) {
    workloads.push_back(CopyWorkload(b, "fp16"));
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::CopyStrided(), workloads, 1, 131),
      IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(testing::CopyStrided(),
                                    {CopyWorkload(LoweringBoxes()[5], "fp16")},
                                    {"WG=4,VW=8,EPW=2", "WG=1,VW=8,EPW=4"}),
              IsEmpty());
}

TEST(CopyTemplate, RefusesBoxesPastTheirBuffersAndOverlappingWrites) {
  const KernelTemplate& t = testing::CopyStrided();
  const DeviceLimits limits = testing::DeviceLimits();
  // Copy shapes and a part of CheckWorkload's refusal of each (nullptr:
  // accepted).
  const std::pair<const char*, const char*> boxes[] = {
      // The input box ends at 1 + 2*3 + 4 = 11 of 11 elements.
      {"D4=3,D5=5,IS4=3,IS5=1,IO=1,OS4=5,OS5=1,IE=11,OE=15",
       "reaches input element 11, past the input's IE=11 elements"},
      {"D4=3,D5=5,IS4=3,IS5=1,IO=1,OS4=5,OS5=1,IE=12,OE=15", nullptr},
      {"D5=5,IS5=1,OS5=1,OO=3,IE=5,OE=7", "reaches output element 7"},
      {"D4=2,D5=5,IS4=5,IS5=1,OS4=0,OS5=1,IE=10,OE=5",
       "writes one output element more than once"},
  };
  for (const auto& [shape, refusal] : boxes) {
    const absl::Status s =
        t.CheckWorkload(testing::MustParse("copy", shape), limits);
    if (refusal == nullptr) {
      EXPECT_TRUE(s.ok()) << shape << ": " << s;
    } else {
      EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(refusal))
          << shape;
    }
  }
  // Vectors only where the output row is contiguous.
  const Workload strided_out = testing::MustParse(
      "copy", "D4=4,D5=8,IS4=8,IS5=1,OS4=1,OS5=4,IE=32,OE=32");
  EXPECT_THAT(
      std::string(testing::CheckText(t, strided_out, limits, "WG=4,VW=4,EPW=1")
                      .message()),
      ::testing::HasSubstr("need output stride OS5 = 1"));
  EXPECT_TRUE(
      testing::CheckText(t, strided_out, limits, "WG=4,VW=1,EPW=1").ok());
  // 0 FLOPs; bytes moved: each element of the box read and written once.
  const Workload w = CopyWorkload(LoweringBoxes()[0]);
  EXPECT_EQ(t.Flops(w), 0);
  EXPECT_EQ(t.Bytes(w), 2 * 720 * 4);
}

TEST(CopyReference, LoweringsMatchHost) {
  for (const Box& b : LoweringBoxes()) {
    const Workload w = CopyWorkload(b);
    SCOPED_TRACE(w.Canonical());
    const std::vector<float> in = Ramp(b.ie);
    // The output starts with other values: those outside the box stay.
    const std::vector<float> before = Ramp(b.oe, 11);
    const std::vector<float> want = HostCopy(b, in, before);
    EXPECT_EQ(testing::RunReferenceOn(testing::CopyStrided(), w,
                                      {{"input", in}, {"output", before}}),
              want);
    // And a tuned config with vectors, run on the same data.
    const std::string config =
        b.os.back() == 1 ? "WG=8,VW=4,EPW=2" : "WG=8,VW=1,EPW=2";
    EXPECT_EQ(testing::RunConfigOn(testing::CopyStrided(), w, config,
                                   {{"input", in}, {"output", before}}),
              want);
  }
}

TEST(CopyReference, ConcatOfThreeInputsFillsOneOutput) {
  // (2, 3, 4), (2, 1, 4) and (2, 2, 4) along axis 1 into (2, 6, 4): three
  // copies into one output, each leaving the others' channels alone.
  const std::array<int64_t, 3> channels = {3, 1, 2};
  const int64_t total_channels = 6, inner = 4, outer = 2;
  std::vector<float> reference(outer * total_channels * inner, -100.0f);
  std::vector<float> tuned = reference;
  std::vector<float> want(reference.size(), 0.0f);
  int64_t at = 0;
  for (size_t k = 0; k < channels.size(); ++k) {
    const int64_t c = channels[k];
    const Box b{{outer, c, inner},
                {c * inner, inner, 1},
                {total_channels * inner, inner, 1},
                0,
                at * inner,
                outer * c * inner,
                outer * total_channels * inner};
    const std::vector<float> in = Ramp(b.ie, static_cast<int>(k) * 5);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t i = 0; i < inner; ++i) {
          want[(o * total_channels + at + ch) * inner + i] =
              in[(o * c + ch) * inner + i];
        }
      }
    }
    const Workload w = CopyWorkload(b);
    reference = testing::RunReferenceOn(testing::CopyStrided(), w,
                                        {{"input", in}, {"output", reference}});
    tuned = testing::RunConfigOn(testing::CopyStrided(), w, "WG=2,VW=4,EPW=1",
                                 {{"input", in}, {"output", tuned}});
    at += c;
  }
  EXPECT_EQ(reference, want);
  EXPECT_EQ(tuned, want);
}

// ------------------------------------------------------------------ fill

TEST(FillOnDevice, RandomAndChosenConfigsMatchReference) {
  std::vector<Workload> workloads, halves;
  for (const char* shape : {"E=1,OE=1", "E=7,O=3,OE=12", "E=1000,O=1,OE=1003",
                            "E=4099,O=5,OE=5000", "E=64,OE=64"}) {
    workloads.push_back(testing::MustParse("fill", shape));
    halves.push_back(testing::MustParse("fill", shape, "fp16"));
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::FillRange(), workloads, 2, 201),
      IsEmpty());
  EXPECT_THAT(testing::CheckRandomConfigs(testing::FillRange(), halves, 1, 211),
              IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(
                  testing::FillRange(),
                  {testing::MustParse("fill", "E=1000,O=3,OE=1009"),
                   testing::MustParse("fill", "E=1000,O=3,OE=1009", "fp16")},
                  {"WG=1,VW=8,EPW=4", "WG=4,VW=4,EPW=2", "WG=32,VW=2,EPW=8"}),
              IsEmpty());
}

TEST(FillReference, SetsItsRangeAndLeavesTheRest) {
  const Workload w = testing::MustParse("fill", "E=9,O=4,OE=17");
  const std::vector<float> before = Ramp(17);
  std::vector<float> want = before;
  for (int i = 4; i < 13; ++i) want[i] = -0.5f;
  EXPECT_EQ(testing::RunReferenceOn(testing::FillRange(), w,
                                    {{"output", before}}, {-0.5f}),
            want);
  EXPECT_EQ(testing::RunConfigOn(testing::FillRange(), w, "WG=2,VW=4,EPW=1",
                                 {{"output", before}}, {-0.5f}),
            want);
  // -FLT_MAX (a max pool's padding) and infinity land as they are.
  for (float value : {-3.4028234663852886e38f, INFINITY}) {
    const std::vector<float> out =
        testing::RunConfigOn(testing::FillRange(), w, "WG=1,VW=8,EPW=1",
                             {{"output", before}}, {value});
    EXPECT_EQ(out[4], value);
    EXPECT_EQ(out[12], value);
    EXPECT_EQ(out[13], before[13]);
  }
  EXPECT_EQ(testing::FillRange().Flops(w), 0);
  EXPECT_EQ(testing::FillRange().Bytes(w), 9 * 4);
}

// ---------------------------------------------------------------- reduce

constexpr const char* kReduceFns[] = {"sum",    "mean",      "max", "min",
                                      "prod",   "sumsquare", "l1",  "l2",
                                      "logsum", "logsumexp"};

TEST(ReduceOnDevice, EveryFnMatchesReference) {
  // Columns (I > 1), rows (I = 1), a single value, odd sizes.
  const char* shapes[] = {"O=3,R=7,I=5",   "O=1,R=1000,I=1",
                          "O=4,R=300,I=1", "O=2,R=33,I=129",
                          "R=1",           "O=17,R=5"};
  std::vector<Workload> workloads;
  int k = 0;
  for (const char* fn : kReduceFns) {
    for (int s = 0; s < 2; ++s) {
      workloads.push_back(testing::MustParse(
          "reduce", absl::StrCat(shapes[k++ % 6], ",fn=", fn)));
    }
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::ReduceAxis(), workloads, 1, 301),
      IsEmpty());
}

TEST(ReduceOnDevice, ChosenConfigsMatchReference) {
  // Split columns with partial last work-groups along O and I.
  EXPECT_THAT(testing::CheckConfigs(
                  testing::ReduceAxis(),
                  {testing::MustParse("reduce", "O=5,R=1000,I=3,fn=mean")},
                  {"WGI=1,SPLIT=256,WGO=1", "WGI=4,SPLIT=16,WGO=2",
                   "WGI=2,SPLIT=8,WGO=8"}),
              IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(
                  testing::ReduceAxis(),
                  {testing::MustParse("reduce", "O=9,R=77,I=1,fn=logsumexp")},
                  {"WGI=1,SPLIT=64,WGO=2", "WGI=1,SPLIT=1,WGO=8"}),
              IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(
                  testing::ReduceAxis(),
                  {testing::MustParse("reduce", "O=3,R=257,I=33,fn=l2")},
                  {"WGI=32,SPLIT=8,WGO=1", "WGI=2,SPLIT=32,WGO=4"}),
              IsEmpty());
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          testing::ReduceAxis(),
          {testing::MustParse("reduce", "O=3,R=100,I=7,fn=max", "fp16"),
           testing::MustParse("reduce", "O=6,R=50,fn=mean", "fp16"),
           testing::MustParse("reduce", "R=9,I=4,fn=logsumexp", "fp16")},
          2, 331),
      IsEmpty());
}

TEST(ReduceTemplate, LogsumKeepsTheReferencesOrder) {
  const Workload w = testing::MustParse("reduce", "O=2,R=64,fn=logsum");
  const DeviceLimits limits = testing::DeviceLimits();
  EXPECT_THAT(std::string(testing::CheckText(testing::ReduceAxis(), w, limits,
                                             "WGI=1,SPLIT=8,WGO=1")
                              .message()),
              ::testing::HasSubstr("SPLIT = 1"));
  EXPECT_TRUE(testing::CheckText(testing::ReduceAxis(), w, limits,
                                 "WGI=1,SPLIT=1,WGO=2")
                  .ok());
}

// fn over the R values of column (o, i) of `x` (O x R x I), in double.
double HostReduce(const std::string& fn, const std::vector<float>& x, int o,
                  int i, int r_count, int i_count) {
  std::vector<double> v;
  for (int r = 0; r < r_count; ++r) {
    v.push_back(x[(static_cast<size_t>(o) * r_count + r) * i_count + i]);
  }
  return consumer_support::HostReduce(fn, v);
}

TEST(ReduceReference, EveryFnMatchesHost) {
  const int o_count = 2, r_count = 5, i_count = 3;
  // Positive values (a ramp in [0.25, 5.75]) so that logsum is defined.
  std::vector<float> x = Ramp(o_count * r_count * i_count);
  for (float& v : x) v += 3.0f;
  for (const char* fn : kReduceFns) {
    SCOPED_TRACE(fn);
    const Workload w =
        testing::MustParse("reduce", absl::StrCat("O=", o_count, ",R=", r_count,
                                                  ",I=", i_count, ",fn=", fn));
    const std::vector<float> out =
        testing::RunReferenceOn(testing::ReduceAxis(), w, {{"input", x}});
    const std::vector<float> tuned = testing::RunConfigOn(
        testing::ReduceAxis(), w,
        std::string(fn) == "logsum" ? "WGI=2,SPLIT=1,WGO=2"
                                    : "WGI=2,SPLIT=4,WGO=2",
        {{"input", x}});
    ASSERT_EQ(out.size(), static_cast<size_t>(o_count * i_count));
    ASSERT_EQ(tuned.size(), out.size());
    for (int o = 0; o < o_count; ++o) {
      for (int i = 0; i < i_count; ++i) {
        const double want = HostReduce(fn, x, o, i, r_count, i_count);
        const double tol = 1e-5 * std::max(1.0, std::fabs(want));
        EXPECT_NEAR(out[o * i_count + i], want, tol) << "o " << o << " i " << i;
        EXPECT_NEAR(tuned[o * i_count + i], want, tol)
            << "o " << o << " i " << i;
      }
    }
  }
}

// ---------------------------------------------------------- verification

// A fill template whose kernel writes `first` .. `last` (relative to the
// range, last exclusive) instead of 0 .. E: a candidate that writes past
// its range or leaves part of it.
std::unique_ptr<SpecTemplate> MiswritingFill(const std::string& first,
                                             const std::string& last) {
  const std::string spec = R"(name = "fill_miswriting"
op = "fill"
flops = "0"
preamble = ["common/dtype.cl"]
[knobs]
WG = [1]
[[buffers]]
name = "output"
elements = "OE"
output = true
dtype = "workload"
[kernel]
name = "miswriting"
global = ["1"]
args = ["E", "O", "output", "float:0.5"]
[reference]
name = "fill_range_reference"
global = ["E"]
args = ["E", "O", "output", "float:0.5"]
)";
  const std::string source = absl::StrCat(
      "#define real_t float\n#define STOREF(v, p, i) ((p)[i] = (v))\n",
      "__kernel void miswriting(const int E, const int O, __global float* "
      "output, const float value) {\n  for (int i = ",
      first, "; i < ", last, "; ++i) STOREF(value, output, O + i);\n}\n",
      "__kernel void fill_range_reference(const int E, const int O, "
      "__global real_t* output, const float value) {\n"
      "  const int i = get_global_id(0);\n"
      "  if (i < E) STOREF(value, output, O + i);\n}\n");
  auto t = SpecTemplate::Parse(spec, "toml", source);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

TEST(PartialOutputs, VerifyOnlyWhenTheRestIsLeftAlone) {
  const Workload w = testing::MustParse("fill", "E=6,O=3,OE=12");
  struct Case {
    const char* first;
    const char* last;
    tunefleet::v1::Measurement::Error want;
  };
  for (const Case& c :
       {Case{"0", "E", tunefleet::v1::Measurement::OK},
        Case{"0", "E + 1", tunefleet::v1::Measurement::WRONG_ANSWER},
        Case{"-1", "E", tunefleet::v1::Measurement::WRONG_ANSWER},
        Case{"0", "E - 1", tunefleet::v1::Measurement::WRONG_ANSWER}}) {
    SCOPED_TRACE(absl::StrCat(c.first, " .. ", c.last));
    std::unique_ptr<SpecTemplate> t = MiswritingFill(c.first, c.last);
    ASSERT_NE(t, nullptr);
    const tunefleet::v1::Measurement m = testing::RunConfig(*t, w, {1});
    EXPECT_EQ(m.error(), c.want) << m.error_message();
  }
}

}  // namespace
}  // namespace tunefleet::templates
