// The memory-bound templates of the ONNX model ops (eltwise_direct,
// resize_direct, layernorm_rows) on the OpenCL device (PoCL in CI): random
// and chosen configs against each template's naive reference for odd
// shapes, every attribute value (the unary fns and pow included) and fp16
// storage; each reference once against a computation on the host from
// inputs the test writes; clip's bounds taken from the floats, infinite
// ones included.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"

namespace tunefleet::templates {
namespace {

using ::testing::IsEmpty;
using testing::Ramp;

// --------------------------------------------------------------- eltwise

constexpr const char* kFns[] = {"none", "add", "sub", "mul",
                                "div",  "max", "min"};
constexpr const char* kBs[] = {"tensor", "scalar", "channel", "nc"};
constexpr const char* kActs[] = {"none",        "relu",      "clip",
                                 "hardsigmoid", "hardswish", "leakyrelu",
                                 "sigmoid",     "silu"};

TEST(EltwiseOnDevice, EveryFnAndBroadcastMatchesReference) {
  // One element, planes of 35 (no vector width divides them), planes of 4
  // with several images, and a larger tensor.
  const char* shapes[] = {"C=1", "C=3,H=5,W=7", "N=2,C=5,H=2,W=2",
                          "C=6,H=17,W=19"};
  std::vector<Workload> workloads;
  int k = 0;
  for (const char* fn : kFns) {
    for (const char* b : kBs) {
      if (std::string(fn) == "none" && std::string(b) != "tensor") continue;
      workloads.push_back(testing::MustParse(
          "eltwise", absl::StrCat(shapes[k++ % 4], ",fn=", fn, ",b=", b)));
    }
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::EltwiseDirect(), workloads, 2, 1),
      IsEmpty());
}

TEST(EltwiseOnDevice, EpilogueAttrsMatchReference) {
  std::vector<Workload> workloads;
  const char* affines[] = {"none", "shift", "scale_shift"};
  int k = 0;
  for (const char* act : kActs) {
    const std::string p = k % 2 == 1 ? "scale_shift" : "none";
    workloads.push_back(testing::MustParse(
        "eltwise",
        absl::StrCat(k % 2 ? "N=2,C=3,H=5,W=3" : "C=4,H=9,W=8",
                     ",fn=", kFns[1 + k % 6], ",b=", kBs[k % 4],
                     ",affine=", affines[k % 3], ",act=", act, ",post=", p)));
    ++k;
  }
  workloads.push_back(testing::MustParse(
      "eltwise",
      "C=5,H=3,W=3,fn=mul,b=nc,affine=shift,act=silu,post=scale_shift"));
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::EltwiseDirect(), workloads, 2, 11),
      IsEmpty());
}

// residual=add (issue 36: a consecutive Add fused): vectors with tails,
// every broadcast, with and without an activation after it.
TEST(EltwiseOnDevice, ResidualMatchesReference) {
  std::vector<Workload> workloads;
  int k = 0;
  for (const char* b : kBs) {
    workloads.push_back(testing::MustParse(
        "eltwise",
        absl::StrCat(k % 2 ? "N=2,C=3,H=5,W=3" : "C=4,H=9,W=7", ",fn=mul,b=", b,
                     ",residual=add", k % 2 ? ",act=relu" : "")));
    ++k;
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::EltwiseDirect(), workloads, 3, 13),
      IsEmpty());
}

TEST(EltwiseOnDevice, ChosenConfigsMatchReference) {
  // Vector tails past the end, vectors crossing planes (H*W = 35), several
  // vectors per work-item, the widest work-group.
  EXPECT_THAT(testing::CheckConfigs(
                  testing::EltwiseDirect(),
                  {testing::MustParse("eltwise",
                                      "N=2,C=3,H=5,W=7,fn=add,b=channel,"
                                      "affine=scale_shift,act=hardswish"),
                   testing::MustParse("eltwise",
                                      "N=2,C=3,H=5,W=7,fn=div,b=nc,"
                                      "affine=shift,act=sigmoid"),
                   testing::MustParse("eltwise",
                                      "C=64,H=40,W=40,fn=mul,"
                                      "b=tensor,act=relu")},
                  {"WG=1,VW=8,EPW=4", "WG=4,VW=4,EPW=2", "WG=8,VW=2,EPW=8",
                   "WG=16,VW=1,EPW=1", "WG=32,VW=8,EPW=1"}),
              IsEmpty());
  EXPECT_THAT(
      testing::CheckConfigs(testing::EltwiseDirect(),
                            {testing::MustParse("eltwise", "C=64,H=40,W=40")},
                            {"WG=1024,VW=4,EPW=4", "WG=256,VW=8,EPW=2"}),
      IsEmpty());
}

TEST(EltwiseOnDevice, HalfStorageMatchesReference) {
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          testing::EltwiseDirect(),
          {testing::MustParse("eltwise", "C=3,H=5,W=7,fn=add,b=tensor,act=silu",
                              "fp16"),
           testing::MustParse("eltwise",
                              "N=2,C=5,H=3,W=3,fn=mul,b=nc,"
                              "affine=scale_shift,act=hardsigmoid",
                              "fp16"),
           testing::MustParse("eltwise", "C=1,fn=max,b=scalar", "fp16")},
          3, 21),
      IsEmpty());
  // Eight-lane half loads at elements that are not 16-byte aligned.
  EXPECT_THAT(testing::CheckConfigs(
                  testing::EltwiseDirect(),
                  {testing::MustParse(
                      "eltwise", "N=2,C=3,H=5,W=7,fn=sub,b=channel", "fp16")},
                  {"WG=4,VW=8,EPW=2", "WG=1,VW=8,EPW=4"}),
              IsEmpty());
}

TEST(EltwiseReference, MatchesHost) {
  // fn=sub, B per (n, c), bias, leakyrelu (alpha 0.01).
  const Workload w = testing::MustParse(
      "eltwise", "N=2,C=3,H=2,W=3,fn=sub,b=nc,affine=shift,act=leakyrelu");
  const int n = 2, c = 3, hw = 6, total = n * c * hw;
  const std::vector<float> a = Ramp(total), b = Ramp(n * c, 5),
                           shift = {0.5f, -1.0f, 0.25f};
  const std::vector<float> out = testing::RunReferenceOn(
      testing::EltwiseDirect(), w,
      {{"a", a}, {"b", b}, {"scale", {0, 0, 0}}, {"shift", shift}});
  ASSERT_EQ(out.size(), static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) {
    const int plane = i / hw;
    float y = a[i] - b[plane] + shift[plane % c];
    y = y >= 0 ? y : 0.01f * y;
    EXPECT_NEAR(out[i], y, 1e-6) << i;
  }
}

TEST(EltwiseReference, EpilogueMatchesHost) {
  // fn=mul with B per channel, batch norm folded into scale and shift, the
  // new activations, then the post step at scale[C + c], shift[C + c].
  const int c = 3, hw = 4, total = c * hw;
  const std::vector<float> a = Ramp(total), b = {0.5f, -2.0f, 1.5f};
  const std::vector<float> scale = {1.5f, -0.5f, 2.0f, 0.25f, 3.0f, -1.0f};
  const std::vector<float> shift = {0.5f, 0.25f, -1.0f, 1.0f, -0.5f, 2.0f};
  for (const char* act : {"hardswish", "sigmoid", "silu", "leakyrelu"}) {
    SCOPED_TRACE(act);
    const std::string name = act;
    const Workload w = testing::MustParse(
        "eltwise", absl::StrCat("C=3,H=2,W=2,fn=mul,b=channel,"
                                "affine=scale_shift,post=scale_shift,act=",
                                act));
    const std::vector<float> out = testing::RunReferenceOn(
        testing::EltwiseDirect(), w,
        {{"a", a}, {"b", b}, {"scale", scale}, {"shift", shift}});
    ASSERT_EQ(out.size(), static_cast<size_t>(total));
    for (int i = 0; i < total; ++i) {
      const int ch = i / hw;
      double y = a[i] * b[ch] * scale[ch] + shift[ch];
      const double sigmoid = 1 / (1 + std::exp(-y));
      if (name == "hardswish") {
        y = y * std::clamp(y / 6 + 0.5, 0.0, 1.0);
      } else if (name == "sigmoid") {
        y = sigmoid;
      } else if (name == "silu") {
        y = y * sigmoid;
      } else {
        y = y >= 0 ? y : 0.01 * y;
      }
      y = y * scale[c + ch] + shift[c + ch];
      EXPECT_NEAR(out[i], y, 1e-5) << i;
    }
  }
}

TEST(EltwiseReference, ResidualMatchesHost) {
  // fn=mul with B per channel (a squeeze-and-excitation scale), the skip
  // Add as the residual, then relu: relu(a * b[c] + r).
  const int c = 3, hw = 4, total = c * hw;
  const std::vector<float> a = Ramp(total), b = {0.5f, -2.0f, 1.5f};
  const std::vector<float> r = Ramp(total, 7);
  const Workload w = testing::MustParse(
      "eltwise", "C=3,H=2,W=2,fn=mul,b=channel,residual=add,act=relu");
  const std::vector<float> out =
      testing::RunReferenceOn(testing::EltwiseDirect(), w,
                              {{"a", a},
                               {"b", b},
                               {"scale", {0, 0, 0}},
                               {"shift", {0, 0, 0}},
                               {"residual", r}});
  ASSERT_EQ(out.size(), static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) {
    EXPECT_NEAR(out[i], std::max(a[i] * b[i / hw] + r[i], 0.0f), 1e-6) << i;
  }
}

// The fns of issue 35: A alone, and pow (A ** B).
constexpr const char* kUnaryFns[] = {"sqrt",  "exp",        "log",   "abs",
                                     "neg",   "reciprocal", "tanh",  "erf",
                                     "floor", "ceil",       "round", "sign"};
constexpr const char* kBModes[] = {"tensor", "scalar", "channel", "nc"};

TEST(EltwiseOnDevice, UnaryFnsAndPowMatchReference) {
  std::vector<Workload> workloads;
  const char* shapes[] = {"C=3,H=5,W=7", "N=2,C=5,H=2,W=2", "C=6,H=17,W=19"};
  int k = 0;
  for (const char* fn : kUnaryFns) {
    // B is one element, unread, whatever `b` says.
    workloads.push_back(testing::MustParse(
        "eltwise",
        absl::StrCat(shapes[k % 3], ",fn=", fn, ",b=", kBModes[k % 4],
                     k % 5 == 0 ? ",act=relu" : "")));
    ++k;
  }
  for (const char* b : kBModes) {
    workloads.push_back(testing::MustParse(
        "eltwise", absl::StrCat(shapes[k++ % 3], ",fn=pow,b=", b)));
  }
  EXPECT_EQ(testing::EltwiseDirect().Buffers(workloads[0])[1].elements, 1u);
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::EltwiseDirect(), workloads, 1, 71),
      IsEmpty());
  EXPECT_THAT(testing::CheckRandomConfigs(
                  testing::EltwiseDirect(),
                  {testing::MustParse("eltwise", "C=3,H=5,W=7,fn=exp", "fp16"),
                   testing::MustParse("eltwise", "C=3,H=5,W=7,fn=pow,b=scalar",
                                      "fp16")},
                  1, 81),
              IsEmpty());
}

// The new fns on the host: NaN where the host has NaN (sqrt and log of
// negatives, pow of a negative to a fraction), infinities where it has them.
void ExpectFnMatchesHost(const std::string& fn, const std::string& b,
                         const std::vector<float>& bv) {
  SCOPED_TRACE(absl::StrCat(fn, " b=", b));
  const int c = 3, hw = 8, total = c * hw;
  const Workload w = testing::MustParse(
      "eltwise", absl::StrCat("C=3,H=2,W=4,fn=", fn, ",b=", b));
  // Ramp's values are multiples of 0.25 in [-2.75, 2.75]: 0, and halves
  // (round's ties to even).
  const std::vector<float> a = Ramp(total);
  const std::vector<float> out = testing::RunReferenceOn(
      testing::EltwiseDirect(), w,
      {{"a", a}, {"b", bv}, {"scale", {0, 0, 0}}, {"shift", {0, 0, 0}}});
  const std::vector<float> tuned = testing::RunConfigOn(
      testing::EltwiseDirect(), w, "WG=2,VW=4,EPW=2",
      {{"a", a}, {"b", bv}, {"scale", {0, 0, 0}}, {"shift", {0, 0, 0}}});
  ASSERT_EQ(out.size(), static_cast<size_t>(total));
  ASSERT_EQ(tuned.size(), out.size());
  for (int i = 0; i < total; ++i) {
    const double x = a[i];
    // b is read only by pow (unary fns get a one-value placeholder).
    const double y = fn != "pow" ? 0 : b == "scalar" ? bv[0] : bv[i];
    double want = 0;
    if (fn == "sqrt") want = std::sqrt(x);
    if (fn == "exp") want = std::exp(x);
    if (fn == "log") want = std::log(x);
    if (fn == "abs") want = std::fabs(x);
    if (fn == "neg") want = -x;
    if (fn == "reciprocal") want = 1 / x;
    if (fn == "tanh") want = std::tanh(x);
    if (fn == "erf") want = std::erf(x);
    if (fn == "pow") want = std::pow(x, y);
    if (fn == "floor") want = std::floor(x);
    if (fn == "ceil") want = std::ceil(x);
    if (fn == "round") want = std::nearbyint(x);
    if (fn == "sign") want = x > 0 ? 1 : x < 0 ? -1 : 0;
    for (float got : {out[i], tuned[i]}) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << i << ": x " << x << " got " << got;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << i << ": x " << x;
      } else {
        EXPECT_NEAR(got, want, 2e-6 * (1 + std::fabs(want)))
            << i << ": x " << x << " y " << y;
      }
    }
  }
}

TEST(EltwiseReference, UnaryFnsAndPowMatchHost) {
  for (const char* fn : kUnaryFns) ExpectFnMatchesHost(fn, "tensor", {7.0f});
  ExpectFnMatchesHost("pow", "scalar", {2.0f});
  ExpectFnMatchesHost("pow", "scalar", {0.5f});
  // Integer, fractional and negative exponents per element.
  std::vector<float> exponents = Ramp(24, 3);
  for (size_t i = 0; i < exponents.size(); i += 3) exponents[i] = 3.0f;
  ExpectFnMatchesHost("pow", "tensor", exponents);
}

TEST(EltwiseReference, ClipTakesInfiniteBoundsFromTheFloats) {
  // Max(x, 0.25) and Min(x, -0.5) fused as act=clip with an infinite bound;
  // fn=none reads A alone.
  const Workload w = testing::MustParse("eltwise", "C=2,H=3,W=4,act=clip");
  const std::vector<float> a = Ramp(24);
  const std::map<std::string, std::vector<float>> data = {
      {"a", a}, {"b", {0}}, {"scale", {0, 0}}, {"shift", {0, 0}}};
  for (const auto& [lo, hi] :
       {std::pair{0.25f, INFINITY}, std::pair{-INFINITY, -0.5f},
        std::pair{-INFINITY, INFINITY}}) {
    SCOPED_TRACE(absl::StrCat(lo, " .. ", hi));
    const std::vector<float> out =
        testing::RunReferenceOn(testing::EltwiseDirect(), w, data, {lo, hi});
    const std::vector<float> tuned = testing::RunConfigOn(
        testing::EltwiseDirect(), w, "WG=4,VW=8,EPW=1", data, {lo, hi});
    ASSERT_EQ(out.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(out[i], std::min(hi, std::max(lo, a[i]))) << i;
      EXPECT_EQ(tuned[i], out[i]) << i;
    }
  }
}

// ---------------------------------------------------------------- resize

TEST(ResizeOnDevice, EveryModeMatchesReference) {
  // Upsampling 2x, a non-integer ratio up and down, a single output row,
  // one input pixel.
  const char* shapes[] = {"C=3,H=5,W=7,OH=10,OW=14",
                          "N=2,C=2,H=5,W=4,OH=7,OW=3", "C=2,H=6,W=9,OH=1,OW=13",
                          "C=3,H=1,W=1,OH=3,OW=5"};
  std::vector<Workload> workloads;
  int k = 0;
  for (const char* coord :
       {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    for (const char* round : {"round_prefer_floor", "floor", "ceil"}) {
      workloads.push_back(testing::MustParse(
          "resize", absl::StrCat(shapes[k++ % 4], ",mode=nearest,coord=", coord,
                                 ",round=", round)));
    }
    for (const char* shape : shapes) {
      workloads.push_back(testing::MustParse(
          "resize", absl::StrCat(shape, ",mode=linear,coord=", coord)));
    }
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::ResizeDirect(), workloads, 2, 31),
      IsEmpty());
}

TEST(ResizeOnDevice, ChosenConfigsMatchReference) {
  // Column tiles past OW (vector stores cut), row tiles past OH, plane
  // tiles past N*C.
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::ResizeDirect(),
          {testing::MustParse("resize", "N=1,C=5,H=20,W=20,OH=40,OW=40"),
           testing::MustParse("resize",
                              "N=1,C=3,H=7,W=9,OH=15,OW=21,mode=linear")},
          {"WGQ=4,WGP=2,QWI=8,PWI=4,CPW=1", "WGQ=1,WGP=1,QWI=1,PWI=1,CPW=4",
           "WGQ=16,WGP=4,QWI=2,PWI=2,CPW=2", "WGQ=2,WGP=8,QWI=4,PWI=1,CPW=4"}),
      IsEmpty());
}

TEST(ResizeOnDevice, HalfStorageMatchesReference) {
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          testing::ResizeDirect(),
          {testing::MustParse("resize", "C=3,H=5,W=7,OH=10,OW=14", "fp16"),
           testing::MustParse("resize",
                              "N=2,C=2,H=5,W=4,OH=7,OW=9,mode=linear,"
                              "coord=align_corners",
                              "fp16")},
          3, 41),
      IsEmpty());
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::ResizeDirect(),
          {testing::MustParse("resize", "C=3,H=5,W=7,OH=10,OW=13", "fp16")},
          {"WGQ=1,WGP=2,QWI=8,PWI=2,CPW=2"}),
      IsEmpty());
}

// ONNX Resize on the host in double: x_original of output index x.
double SourceCoord(int x, int in_len, int out_len, const std::string& coord) {
  const double scale = static_cast<double>(out_len) / in_len;
  if (coord == "asymmetric") return x / scale;
  if (coord == "align_corners") {
    return out_len == 1 ? 0.0 : x * (in_len - 1.0) / (out_len - 1.0);
  }
  if (coord == "pytorch_half_pixel" && out_len == 1) return 0.0;
  return (x + 0.5) / scale - 0.5;
}

int NearestIndex(double x, int in_len, const std::string& round) {
  const double i = round == "floor"  ? std::floor(x)
                   : round == "ceil" ? std::ceil(x)
                                     : std::ceil(x - 0.5);
  return std::clamp(static_cast<int>(i), 0, in_len - 1);
}

// Runs the reference for one nearest or linear workload on a ramp input
// and compares it with the host.
void ExpectResizeMatchesHost(int c, int h, int w, int oh, int ow,
                             const std::string& mode, const std::string& coord,
                             const std::string& round) {
  SCOPED_TRACE(absl::StrCat(h, "x", w, "->", oh, "x", ow, " ", mode, " ", coord,
                            " ", round));
  const Workload wl = testing::MustParse(
      "resize",
      absl::StrCat("C=", c, ",H=", h, ",W=", w, ",OH=", oh, ",OW=", ow,
                   ",mode=", mode, ",coord=", coord, ",round=", round));
  const std::vector<float> in = Ramp(c * h * w);
  const std::vector<float> out =
      testing::RunReferenceOn(testing::ResizeDirect(), wl, {{"input", in}});
  ASSERT_EQ(out.size(), static_cast<size_t>(c * oh * ow));
  for (int p = 0; p < c; ++p) {
    const float* plane = in.data() + p * h * w;
    for (int y = 0; y < oh; ++y) {
      for (int x = 0; x < ow; ++x) {
        const double sy = SourceCoord(y, h, oh, coord);
        const double sx = SourceCoord(x, w, ow, coord);
        double want;
        if (mode == "nearest") {
          want = plane[NearestIndex(sy, h, round) * w +
                       NearestIndex(sx, w, round)];
        } else {
          // ONNX Runtime's bilinear: the coordinate clamped into the input.
          const double cy = std::clamp(sy, 0.0, h - 1.0);
          const double cx = std::clamp(sx, 0.0, w - 1.0);
          const int y0 = static_cast<int>(cy), x0 = static_cast<int>(cx);
          const int y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
          const double ly = cy - y0, lx = cx - x0;
          const double top =
              (1 - lx) * plane[y0 * w + x0] + lx * plane[y0 * w + x1];
          const double bottom =
              (1 - lx) * plane[y1 * w + x0] + lx * plane[y1 * w + x1];
          want = (1 - ly) * top + ly * bottom;
        }
        EXPECT_NEAR(out[(p * oh + y) * ow + x], want, 1e-5)
            << "plane " << p << " y " << y << " x " << x;
      }
    }
  }
}

TEST(ResizeReference, MatchesHost) {
  // Nearest asymmetric floor 2x: out[y][x] = in[y / 2][x / 2].
  ExpectResizeMatchesHost(2, 3, 4, 6, 8, "nearest", "asymmetric", "floor");
  // Bilinear half_pixel 2x (borders clamped).
  ExpectResizeMatchesHost(2, 3, 4, 6, 8, "linear", "half_pixel",
                          "round_prefer_floor");
  // Rounding ties: 2 -> 3 with half_pixel puts x_original of output 1 at
  // exactly 0.5.
  for (const char* round : {"round_prefer_floor", "floor", "ceil"}) {
    ExpectResizeMatchesHost(1, 2, 2, 3, 3, "nearest", "half_pixel", round);
  }
  ExpectResizeMatchesHost(1, 5, 7, 3, 4, "nearest", "align_corners",
                          "round_prefer_floor");
  ExpectResizeMatchesHost(1, 5, 7, 1, 9, "linear", "pytorch_half_pixel",
                          "round_prefer_floor");
  ExpectResizeMatchesHost(1, 4, 6, 7, 5, "linear", "align_corners",
                          "round_prefer_floor");
}

// ------------------------------------------------------------- layernorm

TEST(LayernormOnDevice, RandomConfigsMatchReference) {
  std::vector<Workload> shapes;
  for (const char* shape : {"N=1,D=1", "N=5,D=2", "N=3,D=3", "N=1,D=96",
                            "N=7,D=120", "N=4,D=1000", "N=2,D=1027"}) {
    shapes.push_back(testing::MustParse("layernorm", shape));
    shapes.push_back(testing::MustParse(
        "layernorm", absl::StrCat(shape, ",affine=scale_shift")));
  }
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::LayernormRows(), shapes, 3, 51),
      IsEmpty());
}

TEST(LayernormOnDevice, ChosenConfigsMatchReference) {
  // One pass in registers, many passes with partial last passes, partial
  // last work-groups of rows.
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::LayernormRows(),
          {testing::MustParse("layernorm", "N=5,D=1027"),
           testing::MustParse("layernorm", "N=3,D=1000,affine=scale_shift")},
          {"WPR=256,RPG=1,VW=4,EPW=1", "WPR=16,RPG=2,VW=2,EPW=1",
           "WPR=1,RPG=4,VW=8,EPW=4", "WPR=32,RPG=4,VW=1,EPW=8",
           "WPR=4,RPG=1,VW=8,EPW=4"}),
      IsEmpty());
}

TEST(LayernormOnDevice, HalfStorageMatchesReference) {
  EXPECT_THAT(testing::CheckRandomConfigs(
                  testing::LayernormRows(),
                  {testing::MustParse("layernorm", "N=5,D=1027", "fp16"),
                   testing::MustParse("layernorm",
                                      "N=3,D=120,affine=scale_shift", "fp16"),
                   testing::MustParse("layernorm", "N=1,D=3", "fp16")},
                  3, 61),
              IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(
                  testing::LayernormRows(),
                  {testing::MustParse("layernorm", "N=5,D=1027", "fp16")},
                  {"WPR=1,RPG=4,VW=8,EPW=4", "WPR=64,RPG=2,VW=8,EPW=2"}),
              IsEmpty());
}

TEST(LayernormReference, MatchesHost) {
  const int n = 3, d = 10;
  // Rows with a large mean against their spread (row 2) and a constant row
  // (row 1: outputs 0, then beta).
  std::vector<float> x = Ramp(n * d);
  for (int i = 0; i < d; ++i) {
    x[d + i] = 1.5f;
    x[2 * d + i] += 100.0f;
  }
  const std::vector<float> gamma = Ramp(d, 3), beta = Ramp(d, 11);
  for (const char* affine : {"none", "scale_shift"}) {
    SCOPED_TRACE(affine);
    const bool scaled = std::string(affine) == "scale_shift";
    const Workload w = testing::MustParse(
        "layernorm", absl::StrCat("N=", n, ",D=", d, ",affine=", affine));
    const std::vector<float> out = testing::RunReferenceOn(
        testing::LayernormRows(), w,
        {{"input", x},
         {"gamma", scaled ? gamma : std::vector<float>{0}},
         {"beta", scaled ? beta : std::vector<float>{0}}});
    ASSERT_EQ(out.size(), static_cast<size_t>(n * d));
    for (int r = 0; r < n; ++r) {
      double mean = 0, var = 0;
      for (int i = 0; i < d; ++i) mean += x[r * d + i];
      mean /= d;
      for (int i = 0; i < d; ++i) {
        var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
      }
      var /= d;
      for (int i = 0; i < d; ++i) {
        double y = (x[r * d + i] - mean) / std::sqrt(var + 1e-5);
        if (scaled) y = y * gamma[i] + beta[i];
        EXPECT_NEAR(out[r * d + i], y, 1e-4) << "row " << r << " d " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tunefleet::templates
