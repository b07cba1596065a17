// Library trials (KernelLaunch.library) measured by the Measurer on the
// local OpenCL device (PoCL here) with the real libclblast: MeasureRequests
// built by hand, verified against the templates' own naive references
// (kernels_templates/gemm/gemm_reference.cl, conv/conv2d_reference.cl),
// with the in-place epilogue kernel of library templates
// (kernels_templates/library/epilogue_inplace.cl), and their errors.
#include <stdlib.h>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "library_backends/registry.h"
#include "measure/measurer.h"
#include "opencl/opencl.h"

namespace tunefleet::measure {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using tunefleet::v1::BufferSpec;
using tunefleet::v1::KernelArg;
using tunefleet::v1::KernelLaunch;
using tunefleet::v1::Measurement;
using tunefleet::v1::MeasureRequest;

std::string ReadKernelFile(const std::string& path) {
  std::ifstream in(std::string(TUNEFLEET_SOURCE_DIR) + "/kernels_templates/" +
                   path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << path;
  return text.str();
}

// A kernel source as a spec assembles it: common/dtype.cl and
// common/epilogue.cl, then `file`.
std::string KernelSource(const std::string& file) {
  return absl::StrCat(ReadKernelFile("common/dtype.cl"), "\n",
                      ReadKernelFile("common/epilogue.cl"), "\n",
                      ReadKernelFile(file));
}

KernelArg I32(int v) {
  KernelArg a;
  a.set_i32(v);
  return a;
}
KernelArg F32(float v) {
  KernelArg a;
  a.set_f32(v);
  return a;
}
KernelArg Buf(const std::string& name) {
  KernelArg a;
  a.set_buffer(name);
  return a;
}

class Request {
 public:
  explicit Request(std::string key) {
    request_.set_workload_key(key);
    request_.set_trial_id(1);
    request_.mutable_verification()->set_reference_key(key);
    request_.mutable_verification()->set_rtol(1e-4);
    auto* timing = request_.mutable_timing();
    timing->set_warmup(1);
    timing->set_repeat(2);
    timing->set_number(3);
    timing->set_min_repeat_ms(0);
  }
  Request& Input(const std::string& name, uint64_t elements, uint32_t seed) {
    BufferSpec* b = request_.add_buffers();
    b->set_name(name);
    b->set_elements(elements);
    b->set_dtype(dtype_);
    b->set_fill(BufferSpec::UNIFORM);
    b->set_seed(seed);
    return *this;
  }
  // Scale and shift of an epilogue: always fp32.
  Request& FloatInput(const std::string& name, uint64_t elements,
                      uint32_t seed) {
    Input(name, elements, seed);
    request_.mutable_buffers(request_.buffers_size() - 1)
        ->set_dtype(tunefleet::v1::DTYPE_FP32);
    return *this;
  }
  Request& Output(const std::string& name, uint64_t elements) {
    BufferSpec* b = request_.add_buffers();
    b->set_name(name);
    b->set_elements(elements);
    b->set_dtype(dtype_);
    b->set_fill(BufferSpec::ZERO);
    b->set_output(true);
    return *this;
  }
  Request& Fp16() {
    dtype_ = tunefleet::v1::DTYPE_FP16;
    request_.mutable_verification()->set_rtol(1e-2);
    return *this;
  }
  Request& Library(const std::string& routine,
                   const std::vector<KernelArg>& args) {
    auto* call = request_.mutable_kernel()->mutable_library();
    call->set_library("clblast");
    call->set_routine(routine);
    for (const KernelArg& a : args) *call->add_args() = a;
    return *this;
  }
  // The epilogue kernel after the call.
  Request& Epilogue(const std::vector<uint64_t>& global,
                    const std::vector<KernelArg>& args,
                    const std::string& options) {
    Fill(request_.mutable_kernel(), KernelSource("library/epilogue_inplace.cl"),
         "epilogue_inplace", global, args, options);
    return *this;
  }
  Request& Reference(const std::string& file, const std::string& name,
                     const std::vector<uint64_t>& global,
                     const std::vector<KernelArg>& args,
                     const std::string& options) {
    Fill(request_.mutable_verification()->mutable_reference(),
         KernelSource(file), name, global, args, options);
    return *this;
  }
  const MeasureRequest& get() const { return request_; }

 private:
  static void Fill(KernelLaunch* launch, const std::string& source,
                   const std::string& name, const std::vector<uint64_t>& global,
                   const std::vector<KernelArg>& args,
                   const std::string& options) {
    launch->set_source(source);
    launch->set_kernel_name(name);
    launch->set_build_options(options);
    for (uint64_t g : global) launch->add_global_size(g);
    for (const KernelArg& a : args) *launch->add_args() = a;
  }

  MeasureRequest request_;
  tunefleet::v1::Dtype dtype_ = tunefleet::v1::DTYPE_FP32;
};

// The device, opened once; replay on where the device can, to show that a
// library call is not replayed.
Measurer& Device() {
  static std::unique_ptr<Measurer> measurer = [] {
    absl::StatusOr<opencl::ClDevice> device = opencl::OpenDevice(0, 0);
    EXPECT_TRUE(device.ok()) << device.status();
    absl::StatusOr<std::unique_ptr<Measurer>> m =
        Measurer::Create(*std::move(device), MeasurerOptions{.replay = true});
    EXPECT_TRUE(m.ok()) << m.status();
    return *std::move(m);
  }();
  return *measurer;
}

void ExpectMeasured(const Measurement& m, double rtol, int repeat = 2) {
  ASSERT_EQ(m.error(), Measurement::OK)
      << Measurement::Error_Name(m.error()) << ": " << m.error_message();
  EXPECT_LE(m.max_rel_error(), rtol);
  ASSERT_EQ(m.times_ns_size(), repeat);
  for (double t : m.times_ns()) EXPECT_GT(t, 0);
  EXPECT_EQ(m.number(), 3u);
  EXPECT_FALSE(m.replayed());
  EXPECT_GE(m.compile_ms(), 0);
}

// gemm M x N x K: A, B, C and the naive reference of gemm_tiled.toml.
Request GemmRequest(int m, int n, int k, const std::string& key) {
  Request r(key);
  r.Input("A", m * k, 1).Input("B", k * n, 2).Output("C", m * n);
  return r;
}

Request& GemmReference(Request& r, int m, int n, int k, int fp16 = 0) {
  return r.Reference(
      "gemm/gemm_reference.cl", "gemm_reference",
      {static_cast<uint64_t>(n), static_cast<uint64_t>(m)},
      {I32(m), I32(n), I32(k), Buf("A"), Buf("B"), Buf("C")},
      absl::StrCat("-DDTYPE_FP16=", fp16, " -DAFFINE=0 -DACT=0"));
}

TEST(LibraryTrialTest, DeviceInfoListsClblast) {
  EXPECT_THAT(Device().device_info().libraries(),
              Contains(MatchesRegex("clblast [0-9]+(\\.[0-9]+)*")));
}

TEST(LibraryTrialTest, GemmOddSizesBothForms) {
  const int m = 33, n = 17, k = 9;
  for (int swap : {0, 1}) {
    Request r = GemmRequest(m, n, k, "gemm 33x17x9");
    GemmReference(r, m, n, k);
    r.Library("gemm", {I32(m), I32(n), I32(k), Buf("A"), Buf("B"), Buf("C"),
                       I32(swap)});
    SCOPED_TRACE(absl::StrCat("swap ", swap));
    ExpectMeasured(Device().Measure(r.get()), 1e-4);
  }
}

TEST(LibraryTrialTest, GemmBatchedBAsA1x1Convolution) {
  // conv2d_1x1_gemm's problem: per image, output(K x HW) = weight(K x C) *
  // input(C x HW), with its reference (per-row epilogue off).
  const int kk = 6, hw = 20, c = 5, batch = 3;
  Request r("conv1x1 N3 C5 HW20 K6");
  r.Input("input", batch * c * hw, 1)
      .Input("weight", kk * c, 2)
      .Output("output", batch * kk * hw)
      .FloatInput("scale", kk, 101)
      .FloatInput("shift", kk, 102)
      .Input("residual", 1, 103)  // RESIDUAL=0: never read
      .Reference(
          "gemm/gemm_reference.cl", "gemm_reference_fused", {hw, kk, batch},
          {I32(kk), I32(hw), I32(c), Buf("weight"), Buf("input"), Buf("output"),
           Buf("scale"), Buf("shift"), Buf("residual"), F32(0), F32(0)},
          "-DDTYPE_FP16=0 -DAFFINE=0 -DACT=0 -DEPILOGUE_AXIS=1")
      .Library("gemm_batched_b", {I32(kk), I32(hw), I32(c), I32(batch),
                                  Buf("weight"), Buf("input"), Buf("output")});
  ExpectMeasured(Device().Measure(r.get()), 1e-4);
}

// conv2d N x C x H x W, K kernels R x S, with conv2d_direct.toml's buffers
// and reference; `affine`/`act` as its attrs (then the epilogue kernel).
Request ConvRequest(int n, int c, int h, int w, int k, int rs, int pad,
                    int stride, int affine, int act, int per_image) {
  const int p = (h + 2 * pad - rs) / stride + 1;
  const int q = (w + 2 * pad - rs) / stride + 1;
  const float act_a = act == 3 ? 0.2f : act == 4 ? 1.0f / 6 : 0;
  const float act_b = act == 2 ? 6 : act == 3 || act == 4 ? 0.5f : 0;
  const std::string attrs = absl::StrCat(" -DAFFINE=", affine, " -DACT=", act);
  Request r(absl::StrCat("conv2d N", n, " C", c, " H", h, " W", w, " K", k,
                         " R", rs, " P", pad, " S", stride, " a", affine, act));
  r.Input("input", n * c * h * w, 1)
      .Input("weight", k * c * rs * rs, 2)
      .Output("output", n * k * p * q)
      .FloatInput("scale", k, 101)
      .FloatInput("shift", k, 102)
      .Input("residual", 1, 103)  // RESIDUAL=0: never read
      .Reference("conv/conv2d_reference.cl", "conv2d_reference",
                 {static_cast<uint64_t>(q), static_cast<uint64_t>(p),
                  static_cast<uint64_t>(n * k)},
                 {I32(n),       I32(c),          I32(h),        I32(w),
                  I32(k),       I32(rs),         I32(rs),       I32(stride),
                  I32(stride),  I32(pad),        I32(pad),      I32(1),
                  I32(1),       I32(1),          I32(p),        I32(q),
                  Buf("input"), Buf("weight"),   Buf("output"), Buf("scale"),
                  Buf("shift"), Buf("residual"), F32(act_a),    F32(act_b)},
                 "-DDTYPE_FP16=0" + attrs)
      .Library("convgemm",
               {I32(c), I32(h), I32(w), I32(rs), I32(rs), I32(pad), I32(pad),
                I32(stride), I32(stride), I32(1), I32(1), I32(k), I32(n),
                Buf("input"), Buf("weight"), Buf("output"), I32(per_image)});
  if (affine != 0 || act != 0) {
    r.Epilogue({static_cast<uint64_t>(p * q), static_cast<uint64_t>(k),
                static_cast<uint64_t>(n)},
               {Buf("output"), Buf("scale"), Buf("shift"), Buf("residual"),
                F32(act_a), F32(act_b)},
               "-DDTYPE_FP16=0" + attrs);
  }
  return r;
}

TEST(LibraryTrialTest, ConvgemmWithPaddingAndStride2) {
  for (int per_image : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("per_image ", per_image));
    ExpectMeasured(
        Device().Measure(
            ConvRequest(2, 3, 9, 7, 5, 3, 1, 2, 0, 0, per_image).get()),
        1e-4);
  }
}

TEST(LibraryTrialTest, ConvgemmWithEpilogueKernel) {
  // Batch normalisation folded into scale and shift, then hardswish.
  const Measurement m =
      Device().Measure(ConvRequest(2, 4, 10, 10, 8, 3, 1, 1, 2, 4, 0).get());
  ExpectMeasured(m, 1e-4);
  EXPECT_NE(m.program_source(), Measurement::PROGRAM_SOURCE_UNSPECIFIED);
}

// dense_gemm's problem as a CLBlast GEMM call: output(M x N) = input(M x
// K) * weight(K x N), verified against dense_gemm's reference with the
// epilogue per output feature (column) of `attrs` (build options); the
// epilogue kernel is the caller's to add.
Request DenseCall(int m, int n, int k, const std::string& attrs) {
  Request r(absl::StrCat("dense M", m, " N", n, " K", k, attrs));
  r.Input("input", m * k, 1)
      .Input("weight", k * n, 2)
      .Output("output", m * n)
      .FloatInput("scale", n, 101)
      .FloatInput("shift", n, 102)
      .Input("residual", 1, 103)  // RESIDUAL=0: never read
      .Reference(
          "gemm/gemm_reference.cl", "gemm_reference_fused",
          {static_cast<uint64_t>(n), static_cast<uint64_t>(m), 1},
          {I32(m), I32(n), I32(k), Buf("input"), Buf("weight"), Buf("output"),
           Buf("scale"), Buf("shift"), Buf("residual"), F32(0), F32(0)},
          "-DDTYPE_FP16=0 -DEPILOGUE_AXIS=2" + attrs)
      .Library("gemm", {I32(m), I32(n), I32(k), Buf("input"), Buf("weight"),
                        Buf("output")});
  return r;
}

TEST(LibraryTrialTest, GemmThenReluEpilogueAsDense) {
  // The epilogue: scale_shift, relu.
  const int m = 19, n = 23, k = 31;
  const std::string attrs = " -DAFFINE=2 -DACT=1";
  Request r = DenseCall(m, n, k, attrs);
  r.Epilogue({1, static_cast<uint64_t>(n), static_cast<uint64_t>(m)},
             {Buf("output"), Buf("scale"), Buf("shift"), Buf("residual"),
              F32(0), F32(0)},
             "-DDTYPE_FP16=0" + attrs);
  const Measurement m1 = Device().Measure(r.get());
  ExpectMeasured(m1, 1e-4);
  // The same call without its epilogue is verified against the same
  // reference, and fails: the epilogue really ran, and verification looks.
  EXPECT_EQ(Device().Measure(DenseCall(m, n, k, attrs).get()).error(),
            Measurement::WRONG_ANSWER);
}

TEST(LibraryTrialTest, WrongProductIsWrongAnswer) {
  const int m = 16, n = 16, k = 16;
  Request r = GemmRequest(m, n, k, "gemm 16x16x16");
  GemmReference(r, m, n, k);
  // k - 1: a plausible but wrong product.
  r.Library("gemm", {I32(m), I32(n), I32(k - 1), Buf("A"), Buf("B"), Buf("C")});
  const Measurement result = Device().Measure(r.get());
  EXPECT_EQ(result.error(), Measurement::WRONG_ANSWER)
      << result.error_message();
  EXPECT_GT(result.max_rel_error(), 1e-4);
}

TEST(LibraryTrialTest, Fp16) {
  const int m = 20, n = 12, k = 8;
  Request r("gemm 20x12x8 fp16");
  r.Fp16().Input("A", m * k, 1).Input("B", k * n, 2).Output("C", m * n);
  GemmReference(r, m, n, k, /*fp16=*/1);
  r.Library("gemm", {I32(m), I32(n), I32(k), Buf("A"), Buf("B"), Buf("C")});
  const Measurement result = Device().Measure(r.get());
  bool has_fp16 = false;
  for (const std::string& e : Device().device_info().extensions()) {
    has_fp16 = has_fp16 || e == "cl_khr_fp16";
  }
  if (has_fp16) {
    ExpectMeasured(result, 1e-2);
  } else {
    // PoCL on the CPU: CLBlast refuses half precision, by name.
    EXPECT_EQ(result.error(), Measurement::RUNTIME_ERROR);
    EXPECT_THAT(result.error_message(), HasSubstr("CLBlastNoHalfPrecision"));
  }
}

TEST(LibraryTrialTest, ConfigErrors) {
  const int m = 8, n = 8, k = 8;
  auto measure = [&](const std::string& routine,
                     const std::vector<KernelArg>& args) {
    Request r = GemmRequest(m, n, k, "gemm 8x8x8");
    GemmReference(r, m, n, k);
    r.Library(routine, args);
    return Device().Measure(r.get());
  };
  Measurement result = measure("syrk", {});
  EXPECT_EQ(result.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(result.error_message(), HasSubstr("no routine 'syrk'"));

  result = measure("gemm",
                   {I32(m), I32(n), I32(k + 1), Buf("A"), Buf("B"), Buf("C")});
  EXPECT_EQ(result.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(result.error_message(), HasSubstr("argument 3 (a)"));

  result =
      measure("gemm", {I32(m), I32(n), I32(k), Buf("A"), Buf("X"), Buf("C")});
  EXPECT_EQ(result.error(), Measurement::INVALID_CONFIG);
  EXPECT_THAT(result.error_message(), HasSubstr("unknown buffer 'X'"));

  // After the errors, the workload still measures (inputs refilled).
  result =
      measure("gemm", {I32(m), I32(n), I32(k), Buf("A"), Buf("B"), Buf("C")});
  EXPECT_EQ(result.error(), Measurement::OK) << result.error_message();
}

TEST(LibraryTrialTest, MissingLibraryIsInvalidConfig) {
  const char* old = getenv(library_backends::kClblastLibraryEnv);
  const std::optional<std::string> saved =
      old ? std::optional<std::string>(old) : std::nullopt;
  setenv(library_backends::kClblastLibraryEnv, "/nonexistent/libclblast.so.1",
         1);
  absl::StatusOr<opencl::ClDevice> device = opencl::OpenDevice(0, 0);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<std::unique_ptr<Measurer>> measurer =
      Measurer::Create(*std::move(device));
  ASSERT_TRUE(measurer.ok()) << measurer.status();
  EXPECT_THAT((*measurer)->device_info().libraries(), IsEmpty());
  Request r = GemmRequest(8, 8, 8, "gemm 8x8x8");
  GemmReference(r, 8, 8, 8);
  r.Library("gemm", {I32(8), I32(8), I32(8), Buf("A"), Buf("B"), Buf("C")});
  const Measurement result = (*measurer)->Measure(r.get());
  if (saved.has_value()) {
    setenv(library_backends::kClblastLibraryEnv, saved->c_str(), 1);
  } else {
    unsetenv(library_backends::kClblastLibraryEnv);
  }
  EXPECT_EQ(result.error(), Measurement::INVALID_CONFIG);
  EXPECT_EQ(result.error_message(),
            "library clblast is not available on this agent");
}

}  // namespace
}  // namespace tunefleet::measure
