// Kernel arguments read through images (v1::ImageArg): the choice of view,
// copy or pack and the argument checks off the device, then a user's spec
// whose kernel reads B through read_imagef (knob IMG) measured on the
// OpenCL device (PoCL: no cl_khr_image2d_from_buffer, so rows that fill
// whole texels are copied and others packed) and verified against its
// reference.
#include "measure/image_args.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/spec/spec_template.h"
#include "measure/measurer.h"
#include "tests/support/cl_device_test.h"
#include "tests/support/image_spec.h"
#include "trial/trial_request.h"

namespace tunefleet::measure {
namespace {

using ::testing::HasSubstr;
using tunefleet::v1::Measurement;

ImageCaps Caps() {
  ImageCaps caps;
  caps.image_support = true;
  caps.max_width = 16384;
  caps.max_height = 16384;
  caps.rgba_float = true;
  caps.rgba_half = true;
  return caps;
}

tunefleet::v1::ImageArg Arg(const std::string& buffer, uint64_t rows,
                            uint64_t row_elements) {
  tunefleet::v1::ImageArg arg;
  arg.set_buffer(buffer);
  arg.set_rows(rows);
  arg.set_row_elements(row_elements);
  return arg;
}

tunefleet::v1::BufferSpec Buffer(
    uint64_t elements, tunefleet::v1::Dtype dtype = tunefleet::v1::DTYPE_FP32) {
  tunefleet::v1::BufferSpec spec;
  spec.set_name("B");
  spec.set_elements(elements);
  spec.set_dtype(dtype);
  return spec;
}

TEST(ImageMode, ViewThenCopyThenPack) {
  ImageCaps caps = Caps();
  const tunefleet::v1::BufferSpec b512 = Buffer(512), b240 = Buffer(240),
                                  half16 =
                                      Buffer(16, tunefleet::v1::DTYPE_FP16);
  auto shape = CheckImageArg(Arg("B", 8, 64), &b512, caps);
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->width, 16u);
  EXPECT_EQ(shape->height, 8u);
  EXPECT_EQ(shape->bytes(), 16u * 8 * 16);
  EXPECT_EQ(ChooseImageMode(*shape, caps), ImageMode::kCopy);
  caps.from_buffer = true;
  EXPECT_EQ(ChooseImageMode(*shape, caps), ImageMode::kView);
  // A 256-byte row pitch is 16 float texels: an alignment of 32 refuses it.
  caps.pitch_alignment = 32;
  EXPECT_EQ(ChooseImageMode(*shape, caps), ImageMode::kCopy);
  caps.pitch_alignment = 16;
  EXPECT_EQ(ChooseImageMode(*shape, caps), ImageMode::kView);
  // Rows that end inside a texel are packed, whatever the device.
  auto ragged = CheckImageArg(Arg("B", 8, 30), &b240, caps);
  ASSERT_TRUE(ragged.ok()) << ragged.status();
  EXPECT_EQ(ragged->width, 8u);
  EXPECT_EQ(ChooseImageMode(*ragged, caps), ImageMode::kPack);
  // fp16: CL_HALF_FLOAT texels of 8 bytes.
  auto half = CheckImageArg(Arg("B", 2, 8), &half16, caps);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_TRUE(half->half);
  EXPECT_EQ(half->texel_bytes(), 8u);
}

TEST(ImageMode, ArgumentsTheDeviceOrBufferCannotHaveAreRefused) {
  const ImageCaps caps = Caps();
  struct Case {
    tunefleet::v1::ImageArg arg;
    const tunefleet::v1::BufferSpec* buffer;
    ImageCaps caps;
    const char* message;
  };
  const tunefleet::v1::BufferSpec big = Buffer(uint64_t{1} << 30);
  ImageCaps no_images = caps;
  no_images.image_support = false;
  ImageCaps no_half = caps;
  no_half.rgba_half = false;
  const tunefleet::v1::BufferSpec half = Buffer(64, tunefleet::v1::DTYPE_FP16);
  for (const Case& c : {
           Case{Arg("nope", 1, 4), nullptr, caps, "unknown buffer 'nope'"},
           Case{Arg("B", 0, 4), &big, caps, "must be at least 1"},
           Case{Arg("B", 3, 200), &big, caps, ""},
           Case{Arg("B", 9, 8), &half, caps, "9 rows of 8 elements"},
           Case{Arg("B", 1, 4 * 16384 + 1), &big, caps,
                "16385 texels wide, over the device's "
                "CL_DEVICE_IMAGE2D_MAX_WIDTH of 16384"},
           Case{Arg("B", 16385, 4), &big, caps,
                "CL_DEVICE_IMAGE2D_MAX_HEIGHT of 16384"},
           Case{Arg("B", 1, 4), &big, no_images, "CL_DEVICE_IMAGE_SUPPORT"},
           Case{Arg("B", 1, 4), &half, no_half, "CL_RGBA CL_HALF_FLOAT"},
       }) {
    auto shape = CheckImageArg(c.arg, c.buffer, c.caps);
    if (c.message[0] == '\0') {
      EXPECT_TRUE(shape.ok()) << shape.status();
      continue;
    }
    ASSERT_FALSE(shape.ok()) << c.message;
    EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(shape.status().message()), HasSubstr(c.message));
  }
}

// C(MxN) = A(MxK) * B(KxN), B read through an image when IMG is 1 (texel
// (n/4, k) holds B[k][n..n+3]).
std::string Spec() {
  return testing::GemmImageSpecHead("image_read_test", "",
                                    /*a_workload_dtype=*/true) +
         R"spec([kernel]
name = "gemm"
global = ["N", "M"]
args = ["M", "N", "K", "A", "b_image", "C"]
options = "-DIMG={IMG} -DFP16={fp16}"
[reference]
name = "gemm"
global = ["N", "M"]
args = ["M", "N", "K", "A", "B", "C"]
options = "-DIMG=0 -DFP16={fp16}"
)spec";
}

constexpr char kSource[] = R"cl(
#if FP16
#define ELEM half
#define LOAD(p, i) vload_half((i), (p))
#else
#define ELEM float
#define LOAD(p, i) (p)[i]
#endif
#if IMG
__constant sampler_t kSampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
#define B_ARG __read_only image2d_t b
#else
#define B_ARG __global const ELEM* b
#endif
__kernel void gemm(const int M, const int N, const int K,
                   __global const ELEM* a, B_ARG, __global float* c) {
  const int n = get_global_id(0), m = get_global_id(1);
  if (n >= N || m >= M) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
#if IMG
    const float4 t = read_imagef(b, kSampler, (int2)(n / 4, k));
    const int lane = n % 4;
    const float bk = lane == 0 ? t.x : lane == 1 ? t.y : lane == 2 ? t.z : t.w;
#else
    const float bk = LOAD(b, k * N + n);
#endif
    acc += LOAD(a, m * K + k) * bk;
  }
  c[m * N + n] = acc;
}
)cl";

class ImageTrialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    MeasurerOptions options;
    options.replay = true;  // PoCL has cl_khr_command_buffer
    auto measurer = Measurer::Create(*std::move(device), options);
    ASSERT_TRUE(measurer.ok()) << measurer.status();
    measurer_ = *std::move(measurer);
    auto spec = templates::SpecTemplate::Parse(Spec(), "toml", kSource);
    ASSERT_TRUE(spec.ok()) << spec.status();
    spec_ = *std::move(spec);
  }
  static void TearDownTestSuite() {
    spec_.reset();
    measurer_.reset();
  }

  static tunefleet::v1::MeasureRequest Request(const std::string& shape,
                                               int64_t img,
                                               const char* dtype = "fp32") {
    auto w = templates::Workload::Parse("gemm", shape, dtype);
    EXPECT_TRUE(w.ok()) << w.status();
    tunefleet::v1::TimingPolicy timing;
    timing.set_warmup(1);
    timing.set_repeat(2);
    timing.set_number(3);
    return trial::BuildMeasureRequest(*spec_, *w, {img}, 1, timing);
  }

  // The image of the request's kernel argument 4 and how this device makes
  // it.
  static ImageMode ModeOf(const tunefleet::v1::MeasureRequest& r) {
    const tunefleet::v1::ImageArg& arg = r.kernel().args(4).image();
    const tunefleet::v1::BufferSpec* buffer = nullptr;
    for (const auto& b : r.buffers()) {
      if (b.name() == arg.buffer()) buffer = &b;
    }
    const DeviceInfo info = measurer_->device_info();
    ImageCaps caps;
    caps.image_support = info.image_support();
    caps.max_width = info.image2d_max_width();
    caps.max_height = info.image2d_max_height();
    caps.rgba_float = caps.rgba_half = true;
    for (const std::string& e : info.extensions()) {
      caps.from_buffer |= e == "cl_khr_image2d_from_buffer";
    }
    caps.pitch_alignment = info.image_pitch_alignment();
    return ChooseImageMode(CheckImageArg(arg, buffer, caps).value(), caps);
  }

  using DeviceInfo = tunefleet::v1::DeviceInfo;
  static inline std::unique_ptr<Measurer> measurer_;
  static inline std::unique_ptr<templates::SpecTemplate> spec_;
};

TEST_F(ImageTrialTest, ImagesAreCopiedOrPackedVerifiedAndTimed) {
  ASSERT_TRUE(measurer_->device_info().image_support());
  for (const char* shape : {"M=8,N=64,K=16", "M=7,N=30,K=13"}) {
    SCOPED_TRACE(shape);
    const tunefleet::v1::MeasureRequest image = Request(shape, 1);
    ASSERT_EQ(image.kernel().args(4).value_case(),
              tunefleet::v1::KernelArg::kImage);
    const Measurement m = measurer_->Measure(image);
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_LE(m.max_rel_error(), 1e-6);
    EXPECT_GT(m.pack_ns(), 0);
    // The copy or pack runs before each launch: a round is not replayed.
    EXPECT_FALSE(m.replayed());
    ASSERT_EQ(m.times_ns_size(), 2);
    for (double t : m.times_ns()) EXPECT_GT(t, m.pack_ns());

    const Measurement plain = measurer_->Measure(Request(shape, 0));
    ASSERT_EQ(plain.error(), Measurement::OK) << plain.error_message();
    EXPECT_EQ(plain.pack_ns(), 0);
    EXPECT_EQ(plain.replayed(), measurer_->replay_enabled());
  }
  // Which path ran: N=64 fills whole texels (copy without
  // cl_khr_image2d_from_buffer), N=30 does not (pack).
  const ImageMode whole = ModeOf(Request("M=8,N=64,K=16", 1));
  EXPECT_NE(whole, ImageMode::kPack);
  EXPECT_EQ(ModeOf(Request("M=7,N=30,K=13", 1)), ImageMode::kPack);
}

TEST_F(ImageTrialTest, HalfImagesOfFp16Buffers) {
  bool half_images = false;
  {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok());
    half_images =
        QueryImageCaps(device->context.get(), device->device).rgba_half;
  }
  if (!half_images) {
    GTEST_SKIP() << "the device has no CL_RGBA CL_HALF_FLOAT images";
  }
  for (const char* shape : {"M=5,N=32,K=9", "M=5,N=18,K=9"}) {
    SCOPED_TRACE(shape);
    const Measurement m = measurer_->Measure(Request(shape, 1, "fp16"));
    ASSERT_EQ(m.error(), Measurement::OK) << m.error_message();
    EXPECT_LE(m.max_rel_error(), 1e-6);
    EXPECT_GT(m.pack_ns(), 0);
  }
}

TEST_F(ImageTrialTest, ImagesOverTheDeviceOrTheBufferAreInvalidConfigs) {
  // 4 * max_width + 4 elements per row: one texel too wide.
  const uint64_t n = 4 * measurer_->device_info().image2d_max_width() + 4;
  const Measurement wide =
      measurer_->Measure(Request(absl::StrCat("M=1,N=", n, ",K=2"), 1));
  EXPECT_EQ(wide.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(wide.error_message(), HasSubstr("CL_DEVICE_IMAGE2D_MAX_WIDTH"));

  tunefleet::v1::MeasureRequest unknown = Request("M=4,N=8,K=4", 1);
  unknown.mutable_kernel()->mutable_args(4)->mutable_image()->set_buffer(
      "nope");
  const Measurement refused = measurer_->Measure(unknown);
  EXPECT_EQ(refused.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(refused.error_message(), HasSubstr("unknown buffer 'nope'"));

  tunefleet::v1::MeasureRequest over = Request("M=4,N=8,K=4", 1);
  over.mutable_kernel()->mutable_args(4)->mutable_image()->set_rows(5);
  const Measurement past = measurer_->Measure(over);
  EXPECT_EQ(past.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(past.error_message(), HasSubstr("5 rows of 8 elements"));

  // The workload still measures after the refusals.
  const Measurement ok = measurer_->Measure(Request("M=4,N=8,K=4", 1));
  EXPECT_EQ(ok.error(), Measurement::OK) << ok.error_message();
}

using BufferSpecs =
    google::protobuf::RepeatedPtrField<tunefleet::v1::BufferSpec>;

// fp32 output buffers, each of a name and a count of elements (output
// buffers are filled with clEnqueueFillBuffer: no fill kernel needed).
BufferSpecs Outputs(
    const std::vector<std::pair<std::string, uint64_t>>& outputs) {
  BufferSpecs specs;
  for (const auto& [name, elements] : outputs) {
    tunefleet::v1::BufferSpec* out = specs.Add();
    out->set_name(name);
    out->set_elements(elements);
    out->set_dtype(tunefleet::v1::DTYPE_FP32);
    out->set_output(true);
  }
  return specs;
}

// Workload buffers on the device.
class WorkloadImages : public testing::ClDeviceTest {
 protected:
  // Buffers of at most `byte_budget` bytes for at most 4 workloads, of
  // outputs only.
  std::unique_ptr<WorkloadBuffers> Buffers(uint64_t byte_budget) {
    return std::make_unique<WorkloadBuffers>(
        device_->context.get(), device_->queue.get(), nullptr, nullptr,
        byte_budget, /*max_workloads=*/4);
  }
};

TEST_F(WorkloadImages, ImagesCountInTheWorkloadBudget) {
  std::unique_ptr<WorkloadBuffers> buffers = Buffers(1000);
  const BufferSpecs specs = Outputs({{"C", 100}});
  auto first = buffers->Get("first", specs);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = buffers->Get("second", specs);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->bytes, 400u);
  // 400 + 700 bytes: over the budget whatever is evicted.
  absl::Status over = buffers->Reserve(**second, 700);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(over.message()), HasSubstr("with its images"));
  EXPECT_EQ((*second)->bytes, 400u);
  // 400 + 400 + 300: fits once the first workload is evicted.
  ASSERT_TRUE(buffers->Reserve(**second, 300).ok());
  EXPECT_EQ((*second)->bytes, 700u);
}

// One workload with two sets of buffers (as gemm_tiled's and gemm_gpu's
// with its scratch): both stay, and going back to the first reuses its
// buffers rather than allocating and filling them again.
TEST_F(WorkloadImages, AWorkloadKeepsEachSetOfBuffers) {
  std::unique_ptr<WorkloadBuffers> buffers = Buffers(10000);
  const BufferSpecs plain = Outputs({{"C", 100}});
  const BufferSpecs scratch = Outputs({{"C", 100}, {"W", 50}});
  auto first = buffers->Get("gemm M=8", plain);
  ASSERT_TRUE(first.ok()) << first.status();
  // A mark in C that a rebuilt state (allocated and filled anew) would not
  // have.
  const std::vector<float> mark(100, 42.0f);
  ASSERT_EQ(clEnqueueWriteBuffer(device_->queue.get(),
                                 (*first)->buffers.at("C").get(), CL_TRUE, 0,
                                 mark.size() * sizeof(float), mark.data(), 0,
                                 nullptr, nullptr),
            CL_SUCCESS);
  auto second = buffers->Get("gemm M=8", scratch);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*second, *first);
  EXPECT_EQ((*second)->buffers.size(), 2u);
  auto again = buffers->Get("gemm M=8", plain);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->buffers.size(), 1u);
  absl::StatusOr<std::vector<float>> c = buffers->Read(**again, "C");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, mark);
}

}  // namespace
}  // namespace tunefleet::measure
