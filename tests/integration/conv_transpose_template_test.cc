// The templates of the transposed convolution (conv_transpose2d_direct)
// and the batched matrix product (batch_matmul_tiled) on the OpenCL device
// (PoCL in CI): each reference kernel against a computation on the host
// (outputs read back), then random valid configs against the reference for
// odd shapes, groups, strides, padding, dilation, output padding, every
// epilogue step and fp16 storage.
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/data/consumer_support/host_conv_transpose.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/template_harness.h"
#include "trial/trial_request.h"

namespace tunefleet::templates {
namespace {

using ::testing::IsEmpty;

Workload Ct(absl::string_view shape, absl::string_view dtype = "fp32") {
  return testing::MustParse("conv_transpose2d", shape, dtype);
}
Workload Bmm(absl::string_view shape, absl::string_view dtype = "fp32") {
  return testing::MustParse("batch_matmul", shape, dtype);
}

std::vector<float> RandomValues(size_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

// The largest |a - b| over max |b|.
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
    scale = std::max(scale, std::fabs(double{b[i]}));
  }
  return worst / scale;
}

// ONNX ConvTranspose written as the scatter it is defined by
// (consumer_support::HostConvTransposeSums), with affine = scale_shift,
// act = leakyrelu (alpha 0.01) and post = scale_shift.
std::vector<float> HostConvTranspose(
    const Workload& w, const std::map<std::string, std::vector<float>>& d) {
  const consumer_support::ConvTransposeSums acc =
      consumer_support::HostConvTransposeSums(
          [&](const char* name) { return w.dim(name); }, d.at("input"),
          d.at("weight"));
  const std::vector<float>& scale = d.at("scale");
  const std::vector<float>& shift = d.at("shift");
  const int K = static_cast<int>(acc.K);
  std::vector<float> out(acc.sums.size());
  for (size_t i = 0; i < acc.sums.size(); ++i) {
    const int k = static_cast<int>(acc.Channel(i));
    double y = acc.sums[i] * scale[k] + shift[k];
    y = y >= 0 ? y : 0.01 * y;
    out[i] = static_cast<float>(y * scale[K + k] + shift[K + k]);
  }
  return out;
}

// The request's input buffers filled with random values.
std::map<std::string, std::vector<float>> RandomInputs(
    const v1::MeasureRequest& r, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, std::vector<float>> data;
  for (const v1::BufferSpec& b : r.buffers()) {
    if (!b.output()) data[b.name()] = RandomValues(b.elements(), &rng);
  }
  return data;
}

// The reference kernel (and one tuned config) against the host's scatter,
// outputs read back: strides 1..3, padding, dilation, output padding and
// groups, with every epilogue step.
TEST(ConvTransposeOnDevice, ReferenceMatchesHostScatter) {
  const KernelTemplate& ct = testing::ConvTranspose2dDirect();
  v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  for (const char* shape :
       {"N=2,C=4,H=5,W=7,K=6,R=3,S=2,SH=2,SW=3,PH=1,PW=0,DH=1,DW=2,OPH=1,"
        "OPW=2,G=2",
        "C=3,H=4,W=4,K=2,R=2,S=2,SH=2,SW=2",
        "C=2,H=3,W=5,K=3,R=3,S=3,PH=1,PW=1,DH=2,DW=1"}) {
    const Workload w = Ct(absl::StrCat(
        shape, ",affine=scale_shift,act=leakyrelu,post=scale_shift"));
    const v1::MeasureRequest ref =
        trial::BuildReferenceRequest(ct, w, 1, quick);
    const auto data = RandomInputs(ref, 7);
    const std::vector<float> expected = HostConvTranspose(w, data);
    EXPECT_LT(
        RelativeError(testing::RunOnHostData(ref.kernel(), ref.buffers(), data),
                      expected),
        1e-5)
        << shape;
    const std::vector<KnobValues> configs =
        testing::RandomConfigs(ct, w, 1, 11);
    ASSERT_EQ(configs.size(), 1u) << shape;
    const v1::MeasureRequest tuned =
        trial::BuildMeasureRequest(ct, w, configs[0], 1, quick);
    EXPECT_LT(RelativeError(
                  testing::RunOnHostData(tuned.kernel(), tuned.buffers(), data),
                  expected),
              1e-5)
        << shape << " " << ct.ConfigString(configs[0]);
  }
}

// Odd shapes over the features of a transposed convolution: sizes 1, 3, 5,
// 7 and 9, H != W, strides 1 to 3 (different along H and W), padding,
// dilation, output padding, groups, a batch of 2, and every epilogue step.
TEST(ConvTransposeOnDevice, RandomConfigsMatchReference) {
  const std::vector<Workload> shapes = {
      Ct("C=3,H=7,W=9,K=5,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
         "act=hardswish"),
      Ct("N=2,C=4,H=5,W=3,K=6,R=4,S=4,SH=2,SW=2,PH=1,PW=1,G=2,affine=shift,"
         "act=relu"),
      Ct("C=6,H=3,W=5,K=3,R=3,S=2,SH=3,SW=2,PH=1,OPH=2,OPW=1,G=3,"
         "act=leakyrelu,post=scale_shift"),
      Ct("C=4,H=5,W=4,K=4,R=3,S=3,SH=2,SW=3,PH=2,PW=1,DH=2,DW=2,OPH=1,"
         "act=sigmoid,affine=scale_shift"),
      Ct("C=5,H=1,W=1,K=3,R=3,S=3,SH=2,SW=2,act=silu,post=scale_shift"),
      Ct("C=2,H=6,W=7,K=7,R=1,S=1,SH=3,SW=1,affine=shift,act=clip"),
      Ct("C=3,H=9,W=7,K=2,R=2,S=2,SH=2,SW=2,act=hardsigmoid"),
  };
  EXPECT_THAT(testing::CheckRandomConfigs(testing::ConvTranspose2dDirect(),
                                          shapes, 4, 501),
              IsEmpty());
  // AP=1 (every row phase in one work-item) on strides 2 and 3 with
  // padding, dilation and output padding.
  for (size_t i = 1; i <= 3; ++i) {
    const std::vector<KnobValues> configs = testing::RandomConfigsWith(
        testing::ConvTranspose2dDirect(), shapes[i], "AP", 1, 2, 550 + i);
    EXPECT_EQ(configs.size(), 2u) << shapes[i].Canonical();
    for (const KnobValues& c : configs) {
      const v1::Measurement m =
          testing::RunConfig(testing::ConvTranspose2dDirect(), shapes[i], c);
      EXPECT_EQ(m.error(), v1::Measurement::OK)
          << shapes[i].Canonical() << " "
          << testing::ConvTranspose2dDirect().ConfigString(c) << ": "
          << m.error_message();
    }
  }
}

// The detection head's stride == kernel case (2x2, stride 2), scaled down,
// with hand-picked configs for vectors, channel tiles and edge tiles.
TEST(ConvTransposeOnDevice, StrideEqualsKernelConfigsMatchReference) {
  const KernelTemplate& ct = testing::ConvTranspose2dDirect();
  EXPECT_THAT(
      testing::CheckConfigs(
          ct,
          {Ct("C=24,H=20,W=20,K=24,R=2,S=2,SH=2,SW=2,affine=scale_shift,"
              "act=relu")},
          {"KWI=4,KWG=8,PWI=2,QWI=4,WGP=2,WGQ=4,VW=4,AP=0",
           "KWI=4,KWG=8,PWI=1,QWI=4,WGP=4,WGQ=2,VW=2,AP=1"}),
      IsEmpty());
  EXPECT_THAT(testing::CheckConfigs(
                  ct,
                  {Ct("C=24,H=21,W=19,K=1,R=2,S=2,SH=2,SW=2,affine=shift,"
                      "act=sigmoid")},
                  {"KWI=1,KWG=1,PWI=2,QWI=8,WGP=2,WGQ=4,VW=4,AP=1",
                   "KWI=1,KWG=1,PWI=2,QWI=2,WGP=8,WGQ=8,VW=1,AP=0"}),
              IsEmpty());
}

TEST(ConvTransposeOnDevice, HalfStorageMatchesReference) {
  EXPECT_THAT(
      testing::CheckRandomConfigs(
          testing::ConvTranspose2dDirect(),
          {Ct("C=4,H=7,W=9,K=6,R=2,S=2,SH=2,SW=2,affine=scale_shift,act=relu",
              "fp16"),
           Ct("N=2,C=4,H=5,W=6,K=4,R=3,S=3,SH=2,SW=1,PH=1,PW=1,OPH=1,G=2,"
              "act=hardswish,post=scale_shift",
              "fp16")},
          3, 601),
      IsEmpty());
}

TEST(ConvTransposeTemplate, RefusesBadGroupsAndEmptyOutputs) {
  const KernelTemplate& ct = testing::ConvTranspose2dDirect();
  const DeviceLimits limits = testing::DeviceLimits();
  EXPECT_FALSE(
      ct.CheckWorkload(Ct("C=4,H=3,W=3,K=3,R=3,S=3,G=2"), limits).ok());
  EXPECT_FALSE(
      ct.CheckWorkload(Ct("C=2,H=1,W=1,K=2,R=1,S=1,PH=1"), limits).ok());
  EXPECT_TRUE(
      ct.CheckWorkload(Ct("C=2,H=1,W=1,K=2,R=3,S=3,PH=1"), limits).ok());
  // FLOPs of the scatter: 2*N*C*H*W*(K/G)*R*S.
  EXPECT_EQ(ct.Flops(Ct("N=2,C=4,H=5,W=6,K=6,R=3,S=2,G=2")),
            2.0 * 2 * 4 * 5 * 6 * 3 * 3 * 2);
}

// The reference batched product against the host's, outputs read back, for
// one batch and several; and one tuned config likewise.
TEST(BatchMatmulOnDevice, ReferenceMatchesHostProduct) {
  const KernelTemplate& bmm = testing::BatchMatmulTiled();
  v1::TimingPolicy quick;
  quick.set_repeat(1);
  quick.set_number(1);
  for (const char* shape : {"M=5,N=7,K=3", "B=3,M=9,N=4,K=11"}) {
    const Workload w = Bmm(shape);
    const int B = w.dim("B"), M = w.dim("M"), N = w.dim("N"), K = w.dim("K");
    const v1::MeasureRequest ref =
        trial::BuildReferenceRequest(bmm, w, 1, quick);
    const auto data = RandomInputs(ref, 13);
    const std::vector<float>& a = data.at("a");
    const std::vector<float>& b = data.at("b");
    std::vector<float> expected(static_cast<size_t>(B) * M * N);
    for (int z = 0; z < B; ++z)
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double sum = 0;
          for (int k = 0; k < K; ++k) {
            sum += double{a[(z * M + m) * K + k]} * b[(z * K + k) * N + n];
          }
          expected[(z * M + m) * N + n] = static_cast<float>(sum);
        }
    EXPECT_LT(
        RelativeError(testing::RunOnHostData(ref.kernel(), ref.buffers(), data),
                      expected),
        1e-5)
        << shape;
    auto config = bmm.ParseConfig(
        "MWG=8,NWG=8,KWG=4,MWI=2,NWI=4,VW=2,SA=1,SB=0,"
        "KUNROLL=2,HALF=0,IMB=0");
    ASSERT_TRUE(config.ok()) << config.status();
    const v1::MeasureRequest tuned =
        trial::BuildMeasureRequest(bmm, w, *config, 1, quick);
    EXPECT_LT(RelativeError(
                  testing::RunOnHostData(tuned.kernel(), tuned.buffers(), data),
                  expected),
              1e-5)
        << shape;
  }
}

// Attention's shapes and odd ones (none a multiple of the tiles), one batch
// and several, fp32 and fp16 storage.
TEST(BatchMatmulOnDevice, RandomConfigsMatchReference) {
  const std::vector<Workload> shapes = {
      Bmm("B=8,M=40,N=40,K=15"), Bmm("B=8,M=40,N=15,K=40"),
      Bmm("M=1,N=1,K=1"),        Bmm("M=33,N=17,K=70"),
      Bmm("B=3,M=7,N=130,K=9"),  Bmm("B=2,M=64,N=64,K=64"),
  };
  EXPECT_THAT(
      testing::CheckRandomConfigs(testing::BatchMatmulTiled(), shapes, 5, 701),
      IsEmpty());
  EXPECT_THAT(testing::CheckRandomConfigs(testing::BatchMatmulTiled(),
                                          {Bmm("B=8,M=40,N=15,K=40", "fp16"),
                                           Bmm("B=2,M=19,N=23,K=5", "fp16")},
                                          3, 801),
              IsEmpty());
}

// Hand-picked configs for each staging choice with partial tiles along M,
// N and K at once.
TEST(BatchMatmulOnDevice, LocalTilesWithEdgesMatchReference) {
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::BatchMatmulTiled(), {Bmm("B=3,M=37,N=29,K=13")},
          {"MWG=16,NWG=16,KWG=8,MWI=2,NWI=4,VW=4,SA=1,SB=1,KUNROLL=2,HALF=0,"
           "IMB=0",
           "MWG=32,NWG=8,KWG=16,MWI=4,NWI=2,VW=2,SA=0,SB=1,KUNROLL=4,HALF=0,"
           "IMB=0",
           "MWG=8,NWG=32,KWG=4,MWI=1,NWI=8,VW=4,SA=1,SB=0,KUNROLL=1,HALF=0,"
           "IMB=0",
           "MWG=16,NWG=16,KWG=32,MWI=1,NWI=1,VW=1,SA=0,SB=0,KUNROLL=8,HALF=0,"
           "IMB=0"}),
      IsEmpty());
}

// B through an image (IMB=1): batch b's K x N slice is rows b*K .. b*K+K-1
// of one image; texels read directly (VW >= 4) and staged (SB=1), with
// partial tiles along M, N and K.
TEST(BatchMatmulOnDevice, ImageOfBMatchesReference) {
  EXPECT_THAT(
      testing::CheckConfigs(
          testing::BatchMatmulTiled(),
          {Bmm("B=3,M=37,N=29,K=13"), Bmm("B=8,M=40,N=40,K=15"),
           Bmm("B=2,M=19,N=23,K=5", "fp16")},
          {"MWG=16,NWG=16,KWG=8,MWI=2,NWI=4,VW=4,SA=1,SB=0,KUNROLL=1,HALF=0,"
           "IMB=1",
           "MWG=32,NWG=32,KWG=4,MWI=4,NWI=8,VW=8,SA=0,SB=0,KUNROLL=2,HALF=0,"
           "IMB=1",
           "MWG=8,NWG=16,KWG=16,MWI=2,NWI=2,VW=1,SA=0,SB=1,KUNROLL=4,HALF=0,"
           "IMB=1"}),
      IsEmpty());
}

}  // namespace
}  // namespace tunefleet::templates
