// The CLBlast backend on the local OpenCL device (PoCL here) with the real
// libclblast: results against naive host references (odd sizes, the
// swapped column-major form, batches, convolutions with padding, stride
// and dilation, one call per image), the arguments it refuses, its status
// names, version and the registry with the library missing.
#include <CL/cl.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "library_backends/clblast_api.h"
#include "library_backends/clblast_backend.h"
#include "library_backends/library.h"
#include "library_backends/registry.h"
#include "library_backends/routine_args.h"

namespace tunefleet::library_backends {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using tunefleet::v1::DTYPE_FP16;
using tunefleet::v1::DTYPE_FP32;

// The first device of the first platform, a context and a profiling queue.
class Device {
 public:
  Device() {
    cl_platform_id platform = nullptr;
    clGetPlatformIDs(1, &platform, nullptr);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr);
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE,
                                  &err);
  }
  ~Device() {
    for (cl_mem m : buffers_) clReleaseMemObject(m);
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
    if (context_ != nullptr) clReleaseContext(context_);
  }
  cl_command_queue queue() const { return queue_; }

  // A buffer holding `values`, released with the device.
  cl_mem Buffer(const std::vector<float>& values) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(
        context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        values.size() * sizeof(float), const_cast<float*>(values.data()), &err);
    buffers_.push_back(mem);
    return mem;
  }
  std::vector<float> Read(cl_mem mem, size_t n) {
    std::vector<float> out(n);
    clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n * sizeof(float), out.data(),
                        0, nullptr, nullptr);
    return out;
  }

 private:
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> buffers_;
};

std::vector<float> Random(size_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

// max|out - ref| / max|ref|, as the agent verifies.
double RelativeError(const std::vector<float>& out,
                     const std::vector<float>& ref) {
  double worst = 0, scale = 1e-30;
  for (float r : ref) scale = std::max(scale, std::fabs(double{r}));
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    worst = std::max(worst, std::fabs(double{out[i]} - ref[i]));
  }
  return worst / scale;
}

// C_i = A * B_i, row-major.
std::vector<float> HostGemm(int m, int n, int k, int batch,
                            const std::vector<float>& a,
                            const std::vector<float>& b) {
  std::vector<float> c(size_t{1} * batch * m * n);
  for (int i = 0; i < batch; ++i) {
    for (int r = 0; r < m; ++r) {
      for (int col = 0; col < n; ++col) {
        double sum = 0;
        for (int l = 0; l < k; ++l) {
          sum += a[r * k + l] * b[(size_t{1} * i * k + l) * n + col];
        }
        c[(size_t{1} * i * m + r) * n + col] = static_cast<float>(sum);
      }
    }
  }
  return c;
}

struct ConvShape {
  int c, h, w, kh, kw, ph, pw, sh, sw, dh, dw, k, n;
  int OutH() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int OutW() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// NCHW cross-correlation with zero padding, OIHW weights.
std::vector<float> HostConv(const ConvShape& s, const std::vector<float>& in,
                            const std::vector<float>& wt) {
  const int oh = s.OutH(), ow = s.OutW();
  std::vector<float> out(size_t{1} * s.n * s.k * oh * ow);
  for (int n = 0; n < s.n; ++n) {
    for (int k = 0; k < s.k; ++k) {
      for (int p = 0; p < oh; ++p) {
        for (int q = 0; q < ow; ++q) {
          double sum = 0;
          for (int c = 0; c < s.c; ++c) {
            for (int r = 0; r < s.kh; ++r) {
              for (int t = 0; t < s.kw; ++t) {
                const int y = p * s.sh - s.ph + r * s.dh;
                const int x = q * s.sw - s.pw + t * s.dw;
                if (y < 0 || y >= s.h || x < 0 || x >= s.w) continue;
                sum += in[((size_t{1} * n * s.c + c) * s.h + y) * s.w + x] *
                       wt[((size_t{1} * k * s.c + c) * s.kh + r) * s.kw + t];
              }
            }
          }
          out[((size_t{1} * n * s.k + k) * oh + p) * ow + q] =
              static_cast<float>(sum);
        }
      }
    }
  }
  return out;
}

class ClblastBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<ClblastBackend>> backend =
        ClblastBackend::Load(DefaultClblastLibraries().front());
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *backend;
  }

  LibraryArg Buf(cl_mem mem, const std::string& name, size_t elements,
                 tunefleet::v1::Dtype dtype = DTYPE_FP32) {
    return LibraryArg::Buffer(mem, name, dtype, elements);
  }
  static LibraryArg Int(int64_t v) { return LibraryArg::Integer(v); }

  // Enqueues and waits; the events returned must have ended.
  absl::Status Run(const std::string& routine,
                   const std::vector<LibraryArg>& args, size_t* events) {
    absl::StatusOr<std::vector<LibraryEvent>> out =
        backend_->Enqueue(routine, args, device_.queue());
    if (!out.ok()) return out.status();
    clFinish(device_.queue());
    for (const LibraryEvent& e : *out) {
      cl_int state = 0;
      clGetEventInfo(e.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state),
                     &state, nullptr);
      EXPECT_EQ(state, CL_COMPLETE);
    }
    if (events != nullptr) *events = out->size();
    return absl::OkStatus();
  }

  Device device_;
  std::shared_ptr<ClblastBackend> backend_;
};

TEST_F(ClblastBackendTest, NameVersionAndRoutines) {
  EXPECT_EQ(backend_->name(), "clblast");
  EXPECT_THAT(backend_->version(), MatchesRegex("[0-9]+(\\.[0-9]+)*"));
  EXPECT_THAT(backend_->routines(),
              ElementsAre("convgemm", "gemm", "gemm_batched_b"));
  EXPECT_TRUE(backend_->HasRoutine("gemm"));
  EXPECT_FALSE(backend_->HasRoutine("syrk"));
}

TEST_F(ClblastBackendTest, GemmOddSizesBothForms) {
  const int m = 33, n = 17, k = 9;
  const std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2);
  const std::vector<float> ref = HostGemm(m, n, k, 1, a, b);
  for (int swap : {0, 1}) {
    cl_mem c = device_.Buffer(std::vector<float>(m * n, NAN));
    std::vector<LibraryArg> args = {Int(m),
                                    Int(n),
                                    Int(k),
                                    Buf(device_.Buffer(a), "A", a.size()),
                                    Buf(device_.Buffer(b), "B", b.size()),
                                    Buf(c, "C", m * n)};
    if (swap) args.push_back(Int(1));
    size_t events = 0;
    const absl::Status s = Run("gemm", args, &events);
    ASSERT_TRUE(s.ok()) << "swap " << swap << ": " << s;
    EXPECT_EQ(events, 1u);
    EXPECT_LT(RelativeError(device_.Read(c, m * n), ref), 1e-5)
        << "swap " << swap;
  }
}

TEST_F(ClblastBackendTest, GemmBatchedBSharesA) {
  const int m = 7, n = 29, k = 12, batch = 3;
  const std::vector<float> a = Random(m * k, 3), b = Random(batch * k * n, 4);
  const std::vector<float> ref = HostGemm(m, n, k, batch, a, b);
  for (int swap : {0, 1}) {
    cl_mem c = device_.Buffer(std::vector<float>(ref.size(), NAN));
    const absl::Status s = Run("gemm_batched_b",
                               {Int(m), Int(n), Int(k), Int(batch),
                                Buf(device_.Buffer(a), "A", a.size()),
                                Buf(device_.Buffer(b), "B", b.size()),
                                Buf(c, "C", ref.size()), Int(swap)},
                               nullptr);
    ASSERT_TRUE(s.ok()) << "swap " << swap << ": " << s;
    EXPECT_LT(RelativeError(device_.Read(c, ref.size()), ref), 1e-5)
        << "swap " << swap;
  }
}

TEST_F(ClblastBackendTest, ConvgemmMatchesTheNaiveConvolution) {
  const ConvShape shapes[] = {
      {3, 8, 8, 3, 3, 0, 0, 1, 1, 1, 1, 4, 1},     // valid
      {3, 9, 7, 3, 3, 1, 1, 2, 2, 1, 1, 5, 2},     // padding, stride 2
      {8, 11, 13, 5, 3, 2, 1, 2, 1, 1, 1, 6, 2},   // rectangular
      {5, 12, 12, 3, 3, 1, 1, 1, 1, 3, 3, 7, 1},   // dilation 3
      {2, 5, 5, 3, 3, 3, 3, 1, 1, 1, 1, 3, 1},     // padding > window
      {3, 10, 10, 4, 4, 1, 2, 2, 3, 1, 1, 5, 2},   // even window
      {16, 14, 14, 1, 1, 0, 0, 1, 1, 1, 1, 32, 2}  // 1x1
  };
  int seed = 10;
  for (const ConvShape& s : shapes) {
    const std::vector<float> in =
        Random(size_t{1} * s.n * s.c * s.h * s.w, seed++);
    const std::vector<float> wt =
        Random(size_t{1} * s.k * s.c * s.kh * s.kw, seed++);
    const std::vector<float> ref = HostConv(s, in, wt);
    for (int per_image : {0, 1}) {
      cl_mem out = device_.Buffer(std::vector<float>(ref.size(), NAN));
      size_t events = 0;
      ASSERT_TRUE(
          Run("convgemm",
              {Int(s.c), Int(s.h), Int(s.w), Int(s.kh), Int(s.kw), Int(s.ph),
               Int(s.pw), Int(s.sh), Int(s.sw), Int(s.dh), Int(s.dw), Int(s.k),
               Int(s.n), Buf(device_.Buffer(in), "input", in.size()),
               Buf(device_.Buffer(wt), "weight", wt.size()),
               Buf(out, "output", ref.size()), Int(per_image)},
              &events)
              .ok());
      EXPECT_EQ(events, per_image ? static_cast<size_t>(s.n) : 1u);
      EXPECT_LT(RelativeError(device_.Read(out, ref.size()), ref), 1e-5)
          << "C" << s.c << " H" << s.h << " W" << s.w << " window " << s.kh
          << "x" << s.kw << " per_image " << per_image;
    }
  }
}

TEST_F(ClblastBackendTest, RefusesBadArgumentsNamingThem) {
  cl_mem mem = device_.Buffer(std::vector<float>(64, 0));
  auto status = [&](const std::string& routine,
                    const std::vector<LibraryArg>& args) {
    return backend_->Enqueue(routine, args, device_.queue()).status();
  };
  absl::Status s = status("syrk", {});
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("no routine 'syrk'"));

  s = status("gemm", {Int(4), Int(4), Int(4), Buf(mem, "A", 64)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("(m, n, k, a, b, c [swap]); got 4"));

  // B needs k*n = 80 elements.
  s = status("gemm", {Int(4), Int(8), Int(10), Buf(mem, "A", 64),
                      Buf(mem, "B", 64), Buf(mem, "C", 64)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("argument 4 (b): buffer 'B' has 64 "
                        "elements; needs 80"));

  s = status("gemm", {Int(0), Int(4), Int(4), Buf(mem, "A", 64),
                      Buf(mem, "B", 64), Buf(mem, "C", 64)});
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("argument 0 (m): 0 is outside"));

  s = status("gemm", {Int(4), Int(4), Buf(mem, "K", 64), Buf(mem, "A", 64),
                      Buf(mem, "B", 64), Buf(mem, "C", 64)});
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("argument 2 (k): must be an integer"));

  s = status("gemm", {Int(4), Int(4), Int(4), Buf(mem, "A", 64),
                      Buf(mem, "B", 64), Buf(mem, "C", 64), Int(2)});
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("argument 6 (swap): 2 is outside [0, 1]"));

  s = status("gemm", {Int(4), Int(4), Int(4), Buf(mem, "A", 64),
                      Buf(mem, "B", 64, DTYPE_FP16), Buf(mem, "C", 64)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("buffer 'B' is fp16"));

  // A 5x5 window over a 3x3 input padded to 4x4: ONNX's output is empty.
  s = status("convgemm",
             {Int(1), Int(2), Int(2), Int(5), Int(5), Int(1), Int(1), Int(1),
              Int(1), Int(1), Int(1), Int(1), Int(1), Buf(mem, "input", 64),
              Buf(mem, "weight", 64), Buf(mem, "output", 64)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("larger than the padded input"));

  // Sizes whose product overflows 64 bits are refused, not wrapped.
  s = status("gemm_batched_b",
             {Int(kMaxIndex), Int(kMaxIndex), Int(kMaxIndex), Int(kMaxIndex),
              Buf(mem, "A", 64), Buf(mem, "B", 64), Buf(mem, "C", 64)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

TEST_F(ClblastBackendTest, LibraryFailureNamesTheStatusCode) {
  // fp16 buffers: where the device lacks cl_khr_fp16 (PoCL), CLBlast
  // answers CLBlastNoHalfPrecision; elsewhere the call succeeds.
  cl_mem mem = device_.Buffer(std::vector<float>(64, 0));
  absl::StatusOr<std::vector<LibraryEvent>> out = backend_->Enqueue(
      "gemm",
      {Int(4), Int(4), Int(4), Buf(mem, "A", 128, DTYPE_FP16),
       Buf(mem, "B", 128, DTYPE_FP16), Buf(mem, "C", 128, DTYPE_FP16)},
      device_.queue());
  clFinish(device_.queue());
  if (!out.ok()) {
    EXPECT_TRUE(absl::IsInternal(out.status())) << out.status();
    EXPECT_THAT(std::string(out.status().message()),
                HasSubstr("CLBlastHgemm: CLBlastNoHalfPrecision (-2045)"));
  }
}

TEST(ClblastApiTest, StatusNames) {
  EXPECT_EQ(ClblastStatusName(0), "CLBlastSuccess");
  EXPECT_EQ(ClblastStatusName(-2045), "CLBlastNoHalfPrecision");
  EXPECT_EQ(ClblastStatusName(-1009), "CLBlastInsufficientMemoryC");
  EXPECT_EQ(ClblastStatusName(-5), "CLBlastOpenCLOutOfResources");
  EXPECT_EQ(ClblastStatusName(-77777), "CLBlastStatusCode(-77777)");
}

TEST(ClblastApiTest, VersionFromLibraryPath) {
  EXPECT_EQ(VersionFromLibraryPath("/usr/lib/x86_64-linux-gnu/"
                                   "libclblast.so.1.5.3"),
            "1.5.3");
  EXPECT_EQ(VersionFromLibraryPath("libclblast.so.1"), "1");
  EXPECT_EQ(VersionFromLibraryPath("/vendor/lib64/libclblast.so"), "unknown");
  EXPECT_EQ(VersionFromLibraryPath("/x/libclblast.so.1.5.3-rc"), "unknown");
  EXPECT_EQ(VersionFromLibraryPath(""), "unknown");
}

TEST(RoutineArgsTest, SaturatingProduct) {
  EXPECT_EQ(SaturatingProduct({3, 5, 7}), 105u);
  EXPECT_EQ(SaturatingProduct({}), 1u);
  EXPECT_EQ(SaturatingProduct({uint64_t{1} << 40, uint64_t{1} << 40}),
            UINT64_MAX);
  EXPECT_EQ(SaturatingProduct({uint64_t{1} << 40, uint64_t{1} << 40, 0}), 0u);
}

// Sets an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(LibraryRegistryTest, FindsClblastByDefault) {
  const LibraryRegistry registry = LibraryRegistry::Load({});
  ASSERT_NE(registry.Find("clblast"), nullptr)
      << (registry.notes().empty() ? "" : registry.notes()[0]);
  EXPECT_EQ(registry.Find("clml"), nullptr);
  EXPECT_THAT(registry.Describe(),
              ElementsAre(MatchesRegex("clblast [0-9]+(\\.[0-9]+)*")));
  EXPECT_TRUE(registry.notes().empty());
}

TEST(LibraryRegistryTest, EnvironmentVariableOverridesAndTurnsOff) {
  {
    const ScopedEnv env(kClblastLibraryEnv, "/nonexistent/libclblast.so.1");
    const LibraryRegistry registry = LibraryRegistry::Load({});
    EXPECT_EQ(registry.Find("clblast"), nullptr);
    EXPECT_TRUE(registry.Describe().empty());
    ASSERT_EQ(registry.notes().size(), 1u);
    EXPECT_THAT(registry.notes()[0],
                HasSubstr("clblast: cannot load /nonexistent/libclblast.so.1"));
  }
  {
    // A library without CLBlast's entry points.
    const ScopedEnv env(kClblastLibraryEnv, "libOpenCL.so.1");
    const LibraryRegistry registry = LibraryRegistry::Load({});
    EXPECT_EQ(registry.Find("clblast"), nullptr);
    ASSERT_EQ(registry.notes().size(), 1u);
    EXPECT_THAT(registry.notes()[0], HasSubstr("has no CLBlastSgemm"));
  }
  {
    const ScopedEnv env(kClblastLibraryEnv, "libclblast.so");
    EXPECT_NE(LibraryRegistry::Load({}).Find("clblast"), nullptr);
  }
}

}  // namespace
}  // namespace tunefleet::library_backends
