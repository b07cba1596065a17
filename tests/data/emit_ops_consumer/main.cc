// For each workload on the command line (canonical strings), runs
// tunefleet_tuned::Run on the first OpenCL device and compares the output
// with a plain C++ implementation written here: copy (the output starts
// with other values, which must stay outside the box), fill (value -1.5,
// likewise), reduce (every fn; positive inputs, so logsum is defined) and
// eltwise with fn=pow (b=scalar, exponent 2) and act=clip with the floats
// -inf, 0.5 (Min(x, 0.5) fused). Prints "<workload> OK|FAIL <error>" per
// workload and "describe <key>" for what DescribeRun says; exit code 0 when
// all match (relative error <= 1e-5).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "first_queue.h"
#include "host_reduce.h"
#include "task_parse.h"
#include "tunefleet_tuned.h"

namespace {

using consumer_support::HostReduce;
using consumer_support::ParseTask;
using consumer_support::Task;

long long Dim(const Task& t, const std::string& name, long long dflt) {
  auto it = t.d.find(name);
  return it == t.d.end() ? dflt : it->second;
}

std::vector<float> Values(size_t n, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = 0.125f * static_cast<float>((i * 7) % 29) - 1.75f + offset;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [device, context, queue] = consumer_support::OpenFirstQueue();
  if (queue == nullptr) return 3;
  int failures = 0;
  for (int a = 1; a < argc; ++a) {
    const Task t = ParseTask(argv[a]);
    std::vector<std::vector<float>> host;  // buffers in the op's order
    std::vector<float> floats;
    std::vector<double> expect;
    size_t out = 0;
    if (t.op == "copy") {
      const long long ie = t.d.at("IE"), oe = t.d.at("OE");
      host = {Values(ie, 0), Values(oe, 100)};
      out = 1;
      expect.assign(host[1].begin(), host[1].end());
      long long dims[6], is[6], os[6];
      for (int k = 0; k < 6; ++k) {
        dims[k] = Dim(t, "D" + std::to_string(k), 1);
        is[k] = Dim(t, "IS" + std::to_string(k), 0);
        os[k] = Dim(t, "OS" + std::to_string(k), 0);
      }
      long long total = 1;
      for (long long e : dims) total *= e;
      for (long long i = 0; i < total; ++i) {
        long long rest = i, src = Dim(t, "IO", 0), dst = Dim(t, "OO", 0);
        for (int k = 5; k >= 0; --k) {
          const long long ik = rest % dims[k];
          rest /= dims[k];
          src += ik * is[k];
          dst += ik * os[k];
        }
        expect[dst] = host[0][src];
      }
    } else if (t.op == "fill") {
      const long long e = t.d.at("E"), o = Dim(t, "O", 0), oe = t.d.at("OE");
      host = {Values(oe, 100)};
      floats = {-1.5f};
      expect.assign(host[0].begin(), host[0].end());
      for (long long i = 0; i < e; ++i) expect[o + i] = -1.5;
    } else if (t.op == "reduce") {
      const long long o_n = Dim(t, "O", 1), r_n = t.d.at("R"),
                      i_n = Dim(t, "I", 1);
      host = {Values(o_n * r_n * i_n, 2.0f), std::vector<float>(o_n * i_n)};
      out = 1;
      const std::string fn = t.attr.count("fn") ? t.attr.at("fn") : "sum";
      for (long long o = 0; o < o_n; ++o) {
        for (long long i = 0; i < i_n; ++i) {
          std::vector<double> v;
          for (long long r = 0; r < r_n; ++r) {
            v.push_back(host[0][(o * r_n + r) * i_n + i]);
          }
          expect.push_back(HostReduce(fn, v));
        }
      }
    } else if (t.op == "eltwise") {
      const long long c = t.d.at("C"),
                      n = Dim(t, "N", 1) * c * Dim(t, "H", 1) * Dim(t, "W", 1);
      host = {Values(n, 0),
              {2.0f},
              std::vector<float>(n),
              std::vector<float>(c),
              std::vector<float>(c)};
      out = 2;
      floats = {-INFINITY, 0.5f};
      for (float x : host[0]) {
        expect.push_back(std::min(0.5, std::pow(static_cast<double>(x), 2.0)));
      }
    } else {
      std::printf("%s FAIL unknown op\n", argv[a]);
      ++failures;
      continue;
    }
    cl_int err = CL_SUCCESS;
    std::vector<cl_mem> mems;
    for (std::vector<float>& b : host) {
      mems.push_back(clCreateBuffer(context,
                                    CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    b.size() * sizeof(float), b.data(), &err));
    }
    err = tunefleet_tuned::Run(queue, argv[a], mems.data(), mems.size(),
                               floats.data(), floats.size());
    std::vector<float> got(host[out].size());
    if (err == CL_SUCCESS) {
      err = clEnqueueReadBuffer(queue, mems[out], CL_TRUE, 0,
                                got.size() * sizeof(float), got.data(), 0,
                                nullptr, nullptr);
    }
    double worst = err == CL_SUCCESS ? 0 : INFINITY;
    for (size_t i = 0; err == CL_SUCCESS && i < got.size(); ++i) {
      worst = std::max(worst, std::fabs(got[i] - expect[i]) /
                                  std::max(1.0, std::fabs(expect[i])));
    }
    const bool ok = worst <= 1e-5;
    failures += ok ? 0 : 1;
    std::printf("%s %s %g (Run: %d)\n", argv[a], ok ? "OK" : "FAIL", worst,
                static_cast<int>(err));
    std::printf("describe %s\n",
                tunefleet_tuned::DescribeRun(device, argv[a]).c_str());
    for (cl_mem m : mems) clReleaseMemObject(m);
  }
  consumer_support::CloseQueue(context, queue);
  return failures == 0 ? 0 : 1;
}
