// The fused epilogue (kernels_templates/common/epilogue.cl) on the OpenCL
// device (PoCL in CI): a tiny kernel made of the built-in common/dtype.cl
// and common/epilogue.cl applies it to random values for every
// AFFINE x RESIDUAL x ACT x POST combination, against a host
// implementation that runs the ONNX ops it replaces one at a time, as
// exporters spell them: Add of the conv bias, BatchNormalization, the
// residual Add, the activation (Relu; Clip 0..6; HardSigmoid 0.2, 0.5;
// HardSwish as x * Clip(x + 3, 0, 6) / 6; LeakyRelu 0.01; Sigmoid; SiLU as
// x * Sigmoid(x)), then PP-LCNetV3's learnable affine block, a Mul and an
// Add by scalars. The kernel gets what the templates' specs give it:
// batch normalisation folded into scale and shift, the post step in the
// buffers' second half, act_a and act_b as the specs' lets; and act_a,
// act_b as a plan gives them, the model's own (Clip's bounds, infinite
// ones for Max and Min with a constant, LeakyRelu's alpha, HardSigmoid's
// alpha and beta).
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels_templates/builtin_templates.h"
#include "opencl/opencl.h"

namespace tunefleet::templates {
namespace {

// Channels (EPI_C), images and pixels per channel of the N x C x HW
// tensors the test kernel reads.
constexpr int kChannels = 5;
constexpr int kImages = 2;
constexpr int kPixels = 7;
constexpr int kElements = kImages * kChannels * kPixels;

// y: the epilogue with the residual; z: epilogue() (no residual), for the
// same element.
constexpr char kTestKernel[] = R"(
__kernel void apply(const __global float* x, const __global real_t* res,
                    __global float* y, __global float* z,
                    const __global float* scale,
                    const __global float* shift, const float act_a,
                    const float act_b, const int HW) {
  const int i = get_global_id(0);
  const int c = (i / HW) % EPI_C;
  y[i] = epilogue_residual(x[i], LOADF(res, i), c, scale, shift, act_a,
                           act_b);
  z[i] = epilogue(x[i], c, scale, shift, act_a, act_b);
})";

enum Act {
  kNone,
  kRelu,
  kClip,
  kHardSigmoid,
  kHardSwish,
  kLeakyRelu,
  kSigmoid,
  kSilu
};

// The ONNX operators, one at a time.
double OnnxSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double OnnxClip(double x, double lo, double hi) {
  return std::min(hi, std::max(lo, x));
}
double OnnxActivation(int act, double x) {
  switch (act) {
    case kRelu:
      return std::max(x, 0.0);
    case kClip:
      return OnnxClip(x, 0.0, 6.0);
    case kHardSigmoid:
      return std::max(0.0, std::min(1.0, 0.2 * x + 0.5));
    case kHardSwish:  // as exporters without HardSwish spell it
      return x * OnnxClip(x + 3.0, 0.0, 6.0) / 6.0;
    case kLeakyRelu:
      return x >= 0 ? x : 0.01 * x;
    case kSigmoid:
      return OnnxSigmoid(x);
    case kSilu:  // SiLU / Swish: Mul(x, Sigmoid(x))
      return x * OnnxSigmoid(x);
    default:
      return x;
  }
}

// act_a and act_b as the templates' specs compute them (their lets).
float ActA(int act) {
  return act == kHardSigmoid ? 0.2f
         : act == kHardSwish ? 1.0f / 6
         : act == kLeakyRelu ? 0.01f
                             : 0.0f;
}
float ActB(int act) {
  return act == kClip                               ? 6.0f
         : act == kHardSigmoid || act == kHardSwish ? 0.5f
                                                    : 0.0f;
}

// The graph's parameters: per channel the conv bias and BatchNormalization's
// gamma, beta, mean and var; the residual tensor; the learnable affine
// block's scalars.
struct Graph {
  std::vector<double> bias, gamma, beta, mean, var;
  double eps = 1e-5;
  std::vector<float> residual;
  double post_scale = 0, post_bias = 0;
};

// The host graph: Conv's output x, then Add(bias) [affine >= 1],
// BatchNormalization [affine == 2], Add(residual), the activation,
// Mul(post_scale), Add(post_bias) [post].
double RunGraph(const Graph& g, int affine, int residual, int act, int post,
                double x, int c, int i) {
  if (affine >= 1) x = x + g.bias[c];
  if (affine == 2) {
    x = (x - g.mean[c]) / std::sqrt(g.var[c] + g.eps) * g.gamma[c] + g.beta[c];
  }
  if (residual) x = x + g.residual[i];
  x = OnnxActivation(act, x);
  if (post) {
    x = x * g.post_scale;
    x = x + g.post_bias;
  }
  return x;
}

// The scale and shift buffers the kernel gets (2 * channels with post):
// the bias alone, or batch normalisation folded with the bias (scale =
// gamma / sqrt(var + eps), shift = beta + (bias - mean) * scale); then the
// post scalars per channel.
void Fold(const Graph& g, int affine, std::vector<float>& scale,
          std::vector<float>& shift) {
  scale.assign(2 * kChannels, 0.0f);
  shift.assign(2 * kChannels, 0.0f);
  for (int c = 0; c < kChannels; ++c) {
    double s = 1, t = affine >= 1 ? g.bias[c] : 0;
    if (affine == 2) {
      s = g.gamma[c] / std::sqrt(g.var[c] + g.eps);
      t = g.beta[c] + (g.bias[c] - g.mean[c]) * s;
    }
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(t);
    scale[kChannels + c] = static_cast<float>(g.post_scale);
    shift[kChannels + c] = static_cast<float>(g.post_bias);
  }
}

class EpilogueOnDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::make_unique<opencl::ClDevice>(*std::move(device));
  }
  static void TearDownTestSuite() { device_.reset(); }

  // The test kernel's source: the built-in files, as specs assemble them.
  static std::string Source() {
    absl::StatusOr<absl::string_view> dtype = BuiltinFile("common/dtype.cl");
    absl::StatusOr<absl::string_view> epilogue =
        BuiltinFile("common/epilogue.cl");
    EXPECT_TRUE(dtype.ok() && epilogue.ok());
    return absl::StrCat(dtype.value_or(""), "\n", epilogue.value_or(""), "\n",
                        kTestKernel);
  }

  // The program built with `options`; null (and the error in `err`) when
  // it does not build.
  static opencl::ClProgram Build(const std::string& options, cl_int* err) {
    const std::string source = Source();
    const char* text = source.c_str();
    opencl::ClProgram program(clCreateProgramWithSource(
        device_->context.get(), 1, &text, nullptr, err));
    if (*err != CL_SUCCESS) return program;
    *err = clBuildProgram(program.get(), 1, &device_->device, options.c_str(),
                          nullptr, nullptr);
    return program;
  }

  opencl::ClMem Buffer(std::vector<float>& host) {
    cl_int err = CL_SUCCESS;
    opencl::ClMem m(clCreateBuffer(
        device_->context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        host.size() * sizeof(float), host.data(), &err));
    EXPECT_EQ(err, CL_SUCCESS);
    return m;
  }

  // Runs the test kernel with the epilogue's defines; y and z as the
  // kernel writes them. act_a and act_b: `floats` when given, else the
  // specs' (ActA, ActB).
  void Apply(int affine, int residual, int act, int post, std::vector<float> x,
             std::vector<float> res, std::vector<float> scale,
             std::vector<float> shift, std::vector<float>* y,
             std::vector<float>* z, const std::vector<float>& floats = {}) {
    cl_int err = CL_SUCCESS;
    opencl::ClProgram program =
        Build(absl::StrCat("-DDTYPE_FP16=0 -DAFFINE=", affine, " -DACT=", act,
                           " -DPOST=", post, " -DRESIDUAL=", residual,
                           " -DEPI_C=", kChannels),
              &err);
    ASSERT_EQ(err, CL_SUCCESS)
        << opencl::BuildLog(program.get(), device_->device);
    opencl::ClKernel kernel(clCreateKernel(program.get(), "apply", &err));
    ASSERT_EQ(err, CL_SUCCESS);
    y->assign(kElements, -1.0f);
    z->assign(kElements, -1.0f);
    opencl::ClMem xb = Buffer(x), rb = Buffer(res), yb = Buffer(*y),
                  zb = Buffer(*z), sb = Buffer(scale), tb = Buffer(shift);
    const cl_mem mems[] = {xb.get(), rb.get(), yb.get(),
                           zb.get(), sb.get(), tb.get()};
    for (cl_uint a = 0; a < 6; ++a) {
      ASSERT_EQ(clSetKernelArg(kernel.get(), a, sizeof(cl_mem), &mems[a]),
                CL_SUCCESS);
    }
    const float act_a = floats.size() == 2 ? floats[0] : ActA(act);
    const float act_b = floats.size() == 2 ? floats[1] : ActB(act);
    const cl_int hw = kPixels;
    ASSERT_EQ(clSetKernelArg(kernel.get(), 6, sizeof(float), &act_a),
              CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(kernel.get(), 7, sizeof(float), &act_b),
              CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(kernel.get(), 8, sizeof(cl_int), &hw), CL_SUCCESS);
    const size_t global = kElements;
    cl_command_queue queue = device_->queue.get();
    ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel.get(), 1, nullptr, &global,
                                     nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(queue, yb.get(), CL_TRUE, 0,
                                  kElements * sizeof(float), y->data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(queue, zb.get(), CL_TRUE, 0,
                                  kElements * sizeof(float), z->data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
  }

  static std::unique_ptr<opencl::ClDevice> device_;
};

std::unique_ptr<opencl::ClDevice> EpilogueOnDevice::device_;

TEST_F(EpilogueOnDevice, EveryCombinationMatchesTheOnnxOpsItReplaces) {
  std::mt19937 rng(17);
  // Wide enough to reach clip's and hardsigmoid's bounds on both sides.
  std::uniform_real_distribution<float> wide(-8, 8);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_real_distribution<double> positive(0.25, 2);
  int combinations = 0;
  for (int affine = 0; affine <= 2; ++affine) {
    for (int residual = 0; residual <= 1; ++residual) {
      for (int act = kNone; act <= kSilu; ++act) {
        for (int post = 0; post <= 1; ++post) {
          SCOPED_TRACE(absl::StrCat("AFFINE=", affine, " RESIDUAL=", residual,
                                    " ACT=", act, " POST=", post));
          Graph g;
          for (int c = 0; c < kChannels; ++c) {
            g.bias.push_back(unit(rng));
            g.gamma.push_back(unit(rng) * 2);
            g.beta.push_back(unit(rng));
            g.mean.push_back(unit(rng));
            g.var.push_back(positive(rng));
          }
          std::vector<float> x(kElements);
          g.residual.resize(kElements);
          for (int i = 0; i < kElements; ++i) {
            x[i] = wide(rng);
            g.residual[i] = wide(rng) / 2;
          }
          g.post_scale = unit(rng) * 2;
          g.post_bias = unit(rng);
          std::vector<float> scale, shift;
          Fold(g, affine, scale, shift);
          std::vector<float> y, z;
          ASSERT_NO_FATAL_FAILURE(Apply(affine, residual, act, post, x,
                                        g.residual, scale, shift, &y, &z));
          for (int i = 0; i < kElements; ++i) {
            const int c = (i / kPixels) % kChannels;
            const double want =
                RunGraph(g, affine, residual, act, post, x[i], c, i);
            const double want_z = RunGraph(g, affine, 0, act, post, x[i], c, i);
            ASSERT_NEAR(y[i], want, 2e-5 * (1 + std::fabs(want)))
                << "element " << i << ", x " << x[i] << ", residual "
                << g.residual[i];
            ASSERT_NEAR(z[i], want_z, 2e-5 * (1 + std::fabs(want_z)))
                << "epilogue() at element " << i;
          }
          ++combinations;
        }
      }
    }
  }
  EXPECT_EQ(combinations, 3 * 2 * 8 * 2);
}

// The post step reads its own channel's values in the buffers' second
// half: per-channel Mul and Add (a tensor of shape C x 1 x 1).
TEST_F(EpilogueOnDevice, PostReadsEachChannelsSecondHalf) {
  std::vector<float> x(kElements), res(kElements, 0.0f);
  for (int i = 0; i < kElements; ++i) x[i] = 0.25f * static_cast<float>(i % 9);
  std::vector<float> scale(2 * kChannels), shift(2 * kChannels);
  for (int c = 0; c < kChannels; ++c) {
    scale[c] = 100.0f;  // AFFINE=0: never read
    shift[c] = 100.0f;
    scale[kChannels + c] = static_cast<float>(c + 1);
    shift[kChannels + c] = -static_cast<float>(c);
  }
  std::vector<float> y, z;
  ASSERT_NO_FATAL_FAILURE(Apply(0, 0, kRelu, 1, x, res, scale, shift, &y, &z));
  for (int i = 0; i < kElements; ++i) {
    const int c = (i / kPixels) % kChannels;
    EXPECT_FLOAT_EQ(y[i], x[i] * (c + 1) - c) << i;
    EXPECT_FLOAT_EQ(z[i], y[i]) << i;
  }
}

// The activation's parameters come from the floats of the call: Clip with
// any constant bounds, Max(x, c) as clip(c, +inf), Min(x, c) as clip(-inf,
// c), LeakyRelu's alpha, HardSigmoid's alpha and beta.
TEST_F(EpilogueOnDevice, ActivationsReadTheirParametersFromTheFloats) {
  constexpr float kInf = INFINITY;
  std::vector<float> x(kElements), res(kElements, 0.0f);
  for (int i = 0; i < kElements; ++i) x[i] = 0.5f * static_cast<float>(i) - 9;
  x[0] = -kInf;
  x[1] = kInf;
  x[2] = -3.4e38f;
  const std::vector<float> scale(2 * kChannels, 1.0f);
  const std::vector<float> shift(2 * kChannels, 0.0f);
  struct Case {
    int act;
    float a, b;
    double (*onnx)(double x, double a, double b);
  };
  const Case cases[] = {
      {kClip, -1.5f, 2.0f,
       [](double v, double a, double b) { return OnnxClip(v, a, b); }},
      {kClip, 0.25f, kInf,
       [](double v, double a, double) { return std::max(v, a); }},
      {kClip, -kInf, -0.75f,
       [](double v, double, double b) { return std::min(v, b); }},
      {kClip, -kInf, kInf, [](double v, double, double) { return v; }},
      {kLeakyRelu, 0.2f, 0.0f,
       [](double v, double a, double) { return v >= 0 ? v : a * v; }},
      {kHardSigmoid, 0.25f, 0.4f,
       [](double v, double a, double b) {
         return std::max(0.0, std::min(1.0, a * v + b));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("ACT=", c.act, " act_a=", c.a, " act_b=", c.b));
    std::vector<float> y, z;
    ASSERT_NO_FATAL_FAILURE(
        Apply(0, 0, c.act, 0, x, res, scale, shift, &y, &z, {c.a, c.b}));
    for (int i = 0; i < kElements; ++i) {
      const double want = c.onnx(x[i], c.a, c.b);
      if (std::isinf(want)) {
        EXPECT_EQ(y[i], want) << "element " << i << ", x " << x[i];
      } else {
        EXPECT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want)))
            << "element " << i << ", x " << x[i];
      }
      EXPECT_EQ(z[i], y[i]) << i;
    }
  }
}

// POST=1 without the channel count does not build: its second half would
// start nowhere.
TEST_F(EpilogueOnDevice, PostWithoutChannelsIsABuildError) {
  cl_int err = CL_SUCCESS;
  opencl::ClProgram program = Build("-DPOST=1 -DACT=1", &err);
  EXPECT_NE(err, CL_SUCCESS);
  EXPECT_NE(opencl::BuildLog(program.get(), device_->device).find("EPI_C"),
            std::string::npos);
}

}  // namespace
}  // namespace tunefleet::templates
