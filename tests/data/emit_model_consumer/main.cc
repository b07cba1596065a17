// For each workload on the command line (canonical strings as `tunefleet
// tasks` prints them), runs tunefleet_tuned::Run on the first OpenCL device
// and compares the output with a plain C++ implementation of the op and its
// epilogue, written here independently of the OpenCL kernels; and checks
// that a short form of the workload (dims at their default and the dtype
// left out, the rest reversed and comma-separated) reads as the canonical
// one. Prints one line per workload; exit code 0 when all match (relative
// error < 1e-4).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tunefleet_tuned.h"

namespace {

struct Task {
  std::string op;
  std::map<std::string, long long> d;
  std::map<std::string, std::string> attr;
};

Task ParseTask(const std::string& text) {
  Task t;
  std::istringstream in(text);
  in >> t.op;
  std::string token;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos) continue;  // dtype
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key == "act" || key == "affine" || key == "mode") {
      t.attr[key] = value;
    } else {
      t.d[key] = std::stoll(value);
    }
  }
  return t;
}

// `canonical` as a user may write it: "conv2d act=relu,K=32,...,C=16"
// without the dims at the defaults of the built-in ops and without fp32.
std::string ShortForm(const std::string& canonical) {
  std::istringstream in(canonical);
  std::string op, token;
  in >> op;
  std::vector<std::string> kept;
  const std::vector<std::string> defaults = {"N=1",  "G=1",  "SH=1", "SW=1",
                                             "DH=1", "DW=1", "PH=0", "PW=0"};
  while (in >> token) {
    const bool is_default =
        std::find(defaults.begin(), defaults.end(), token) != defaults.end() ||
        (op == "dense" && token == "M=1");
    if (!is_default && token != "fp32") kept.push_back(token);
  }
  std::string out = op + " ";
  for (size_t i = kept.size(); i-- > 0;) {
    out += kept[i] + (i > 0 ? "," : "");
  }
  return out;
}

// The activation parameters an application passes for each kind.
void ActParams(const std::string& act, float* a, float* b) {
  *a = 0, *b = 0;
  if (act == "clip") *a = 0, *b = 6;
  if (act == "hardsigmoid") *a = 0.2f, *b = 0.5f;
  if (act == "hardswish") *a = 1.0f / 6, *b = 0.5f;
}

double Epilogue(double x, int c, const Task& t, const std::vector<float>& scale,
                const std::vector<float>& shift) {
  const std::string affine = t.attr.count("affine") ? t.attr.at("affine") : "";
  const std::string act = t.attr.count("act") ? t.attr.at("act") : "";
  if (affine == "scale_shift") x = x * scale[c] + shift[c];
  if (affine == "shift") x = x + shift[c];
  float a, b;
  ActParams(act, &a, &b);
  auto hsig = [&](double v) { return std::min(1.0, std::max(0.0, a * v + b)); };
  if (act == "relu") x = std::max(x, 0.0);
  if (act == "clip") x = std::min<double>(b, std::max<double>(a, x));
  if (act == "hardsigmoid") x = hsig(x);
  if (act == "hardswish") x = x * hsig(x);
  return x;
}

// Host implementations. Shapes: NCHW tensors, OIHW weights.
std::vector<double> Conv(const Task& t, const std::vector<float>& in,
                         const std::vector<float>& w,
                         const std::vector<float>& scale,
                         const std::vector<float>& shift, bool depthwise) {
  const long long N = t.d.at("N"), C = t.d.at("C"), H = t.d.at("H"),
                  W = t.d.at("W"), R = t.d.at("R"), S = t.d.at("S"),
                  SH = t.d.at("SH"), SW = t.d.at("SW"), PH = t.d.at("PH"),
                  PW = t.d.at("PW"), DH = t.d.at("DH"), DW = t.d.at("DW");
  const long long K = depthwise ? C : t.d.at("K");
  const long long G = depthwise ? C : t.d.at("G");
  const long long P = (H + 2 * PH - DH * (R - 1) - 1) / SH + 1;
  const long long Q = (W + 2 * PW - DW * (S - 1) - 1) / SW + 1;
  const long long cg = C / G, kg = K / G;
  std::vector<double> out(N * K * P * Q);
  for (long long n = 0; n < N; ++n)
    for (long long k = 0; k < K; ++k)
      for (long long p = 0; p < P; ++p)
        for (long long q = 0; q < Q; ++q) {
          double sum = 0;
          const long long g = k / kg;
          for (long long c = 0; c < cg; ++c)
            for (long long r = 0; r < R; ++r)
              for (long long s = 0; s < S; ++s) {
                const long long h = p * SH - PH + r * DH,
                                x = q * SW - PW + s * DW;
                if (h < 0 || h >= H || x < 0 || x >= W) continue;
                sum += double(in[((n * C + g * cg + c) * H + h) * W + x]) *
                       w[((k * cg + c) * R + r) * S + s];
              }
          out[((n * K + k) * P + p) * Q + q] =
              Epilogue(sum, int(k), t, scale, shift);
        }
  return out;
}

std::vector<double> Dense(const Task& t, const std::vector<float>& in,
                          const std::vector<float>& w,
                          const std::vector<float>& scale,
                          const std::vector<float>& shift) {
  const long long M = t.d.at("M"), N = t.d.at("N"), K = t.d.at("K");
  std::vector<double> out(M * N);
  for (long long m = 0; m < M; ++m)
    for (long long n = 0; n < N; ++n) {
      double sum = 0;
      for (long long k = 0; k < K; ++k)
        sum += double(in[m * K + k]) * w[k * N + n];
      out[m * N + n] = Epilogue(sum, int(n), t, scale, shift);
    }
  return out;
}

std::vector<double> Pool(const Task& t, const std::vector<float>& in,
                         bool global) {
  const long long N = t.d.at("N"), C = t.d.at("C"), H = t.d.at("H"),
                  W = t.d.at("W");
  const long long R = global ? H : t.d.at("R"), S = global ? W : t.d.at("S");
  const long long SH = global ? 1 : t.d.at("SH"),
                  SW = global ? 1 : t.d.at("SW");
  const long long PH = global ? 0 : t.d.at("PH"),
                  PW = global ? 0 : t.d.at("PW");
  const long long P = (H + 2 * PH - R) / SH + 1, Q = (W + 2 * PW - S) / SW + 1;
  const bool max = t.attr.count("mode") == 0 || t.attr.at("mode") == "max";
  std::vector<double> out(N * C * P * Q);
  for (long long nc = 0; nc < N * C; ++nc)
    for (long long p = 0; p < P; ++p)
      for (long long q = 0; q < Q; ++q) {
        double acc = max ? -INFINITY : 0;
        long long count = 0;
        for (long long r = 0; r < R; ++r)
          for (long long s = 0; s < S; ++s) {
            const long long h = p * SH - PH + r, x = q * SW - PW + s;
            if (h < 0 || h >= H || x < 0 || x >= W) continue;
            const double v = in[(nc * H + h) * W + x];
            acc = max ? std::max(acc, v) : acc + v;
            ++count;
          }
        out[(nc * P + p) * Q + q] = max ? acc : acc / count;
      }
  return out;
}

std::vector<double> Softmax(const Task& t, const std::vector<float>& in) {
  const long long N = t.d.at("N"), D = t.d.at("D");
  std::vector<double> out(N * D);
  for (long long n = 0; n < N; ++n) {
    double m = -INFINITY, sum = 0;
    for (long long i = 0; i < D; ++i) m = std::max(m, double(in[n * D + i]));
    for (long long i = 0; i < D; ++i) sum += std::exp(in[n * D + i] - m);
    for (long long i = 0; i < D; ++i)
      out[n * D + i] = std::exp(in[n * D + i] - m) / sum;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  cl_platform_id platform;
  cl_device_id device;
  cl_int err = clGetPlatformIDs(1, &platform, nullptr);
  err |= clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const Task t = ParseTask(argv[i]);
    std::vector<std::vector<float>> host;  // buffers in the op's order
    std::vector<double> expect;
    size_t out_index = 1;
    float a = 0, b = 0;
    ActParams(t.attr.count("act") ? t.attr.at("act") : "", &a, &b);
    if (t.op == "conv2d" || t.op == "depthwise_conv2d" || t.op == "dense") {
      const bool dense = t.op == "dense", dw = t.op == "depthwise_conv2d";
      size_t in_n, w_n, channels;
      if (dense) {
        in_n = t.d.at("M") * t.d.at("K");
        w_n = t.d.at("K") * t.d.at("N");
        channels = t.d.at("N");
      } else {
        in_n = t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W");
        channels = dw ? t.d.at("C") : t.d.at("K");
        w_n = channels * (dw ? 1 : t.d.at("C") / t.d.at("G")) * t.d.at("R") *
              t.d.at("S");
      }
      std::vector<float> in = random(in_n), w = random(w_n);
      std::vector<float> scale = random(channels), shift = random(channels);
      expect = dense ? Dense(t, in, w, scale, shift)
                     : Conv(t, in, w, scale, shift, dw);
      host = {in, w, std::vector<float>(expect.size()), scale, shift};
      out_index = 2;
    } else if (t.op == "gemm") {
      const long long M = t.d.at("M"), N = t.d.at("N"), K = t.d.at("K");
      std::vector<float> in = random(M * K), w = random(K * N);
      expect.assign(M * N, 0.0);
      for (long long m = 0; m < M; ++m)
        for (long long n = 0; n < N; ++n)
          for (long long k = 0; k < K; ++k)
            expect[m * N + n] += double(in[m * K + k]) * w[k * N + n];
      host = {in, w, std::vector<float>(expect.size())};
      out_index = 2;
    } else {
      std::vector<float> in =
          t.op == "softmax"
              ? random(t.d.at("N") * t.d.at("D"))
              : random(t.d.at("N") * t.d.at("C") * t.d.at("H") * t.d.at("W"));
      expect = t.op == "softmax" ? Softmax(t, in)
                                 : Pool(t, in, t.op == "global_pool");
      host = {in, std::vector<float>(expect.size())};
    }
    std::vector<cl_mem> buffers;
    for (std::vector<float>& h : host) {
      buffers.push_back(clCreateBuffer(context,
                                       CL_MEM_COPY_HOST_PTR | CL_MEM_READ_WRITE,
                                       h.size() * 4, h.data(), &err));
    }
    const float floats[2] = {a, b};
    const size_t num_floats =
        t.op == "conv2d" || t.op == "depthwise_conv2d" || t.op == "dense" ? 2
                                                                          : 0;
    err = tunefleet_tuned::Run(queue, argv[i], buffers.data(), buffers.size(),
                               floats, num_floats);
    std::vector<float> out(expect.size());
    if (err == CL_SUCCESS) {
      err =
          clEnqueueReadBuffer(queue, buffers[out_index], CL_TRUE, 0,
                              out.size() * 4, out.data(), 0, nullptr, nullptr);
    }
    double worst = 0, scale = 1e-30;
    for (size_t j = 0; j < expect.size(); ++j) {
      scale = std::max(scale, std::fabs(expect[j]));
      worst = std::max(worst, std::fabs(expect[j] - out[j]));
    }
    const double rel = err == CL_SUCCESS ? worst / scale : INFINITY;
    const std::string short_form = ShortForm(argv[i]);
    const std::string described = tunefleet_tuned::DescribeRun(device, argv[i]);
    const bool short_ok =
        tunefleet_tuned::CanonicalWorkload(short_form.c_str()) == argv[i] &&
        tunefleet_tuned::DescribeRun(device, short_form.c_str()) == described &&
        !described.empty();
    std::printf("%s: %s rel=%g device=%s short='%s' %s\n", argv[i],
                rel < 1e-4 ? "OK" : "MISMATCH", rel, described.c_str(),
                short_form.c_str(), short_ok ? "OK" : "MISMATCH");
    failures += !(rel < 1e-4) + !short_ok;
    for (cl_mem m : buffers) clReleaseMemObject(m);
  }
  tunefleet_tuned::ReleaseCachedPrograms();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return failures == 0 ? 0 : 1;
}
