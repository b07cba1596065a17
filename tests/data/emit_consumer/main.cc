// Runs tunefleet_tuned::Gemm on the first OpenCL device for the shapes on
// the command line (MxNxK ...), and tunefleet_tuned::Run for the same
// workload ("gemm M=.. N=.. K=.. fp32"), and checks each result against a
// host reference computed in double precision. Prints one line per shape:
//   <M>x<N>x<K> <shape_match> <device_match> <max_rel_error> <config>
//       [<build options>] g=<global0>,<global1> l=<local0>,<local1>
//       run=<max_rel_error of Run>
// and checks that short forms of the workload ("gemm K=.. M=..,N=..")
// read as the canonical one. Any other argument is a workload string in
// any form Run() reads; for it, prints
//   describe '<argument>' canonical='<CanonicalWorkload>' device=<DescribeRun>
// Exit code 0 when every result matches.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "first_queue.h"
#include "tunefleet_tuned.h"

namespace {

// max|c - a*b| / max|a*b| over the m x n result (row-major, in double).
double RelativeError(int m, int n, int k, const std::vector<float>& a,
                     const std::vector<float>& b, const std::vector<float>& c) {
  double worst = 0, scale = 1e-30;
  for (int r = 0; r < m; ++r) {
    for (int col = 0; col < n; ++col) {
      double sum = 0;
      for (int q = 0; q < k; ++q)
        sum += double(a[size_t(r) * k + q]) * b[size_t(q) * n + col];
      scale = std::fmax(scale, std::fabs(sum));
      worst = std::fmax(worst, std::fabs(sum - c[size_t(r) * n + col]));
    }
  }
  return worst / scale;
}

}  // namespace

int main(int argc, char** argv) {
  const auto [device, context, queue] = consumer_support::OpenFirstQueue();
  if (queue == nullptr) return 3;
  int failures = 0;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int i = 1; i < argc; ++i) {
    int m, n, k;
    char rest = 0;
    if (std::sscanf(argv[i], "%dx%dx%d%c", &m, &n, &k, &rest) != 3) {
      std::printf("describe '%s' canonical='%s' device=%s\n", argv[i],
                  tunefleet_tuned::CanonicalWorkload(argv[i]).c_str(),
                  tunefleet_tuned::DescribeRun(device, argv[i]).c_str());
      continue;
    }
    cl_int err = CL_SUCCESS;
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    cl_mem da = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY,
                               a.size() * 4, a.data(), &err);
    cl_mem db = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_ONLY,
                               b.size() * 4, b.data(), &err);
    cl_mem dc =
        clCreateBuffer(context, CL_MEM_WRITE_ONLY, c.size() * 4, nullptr, &err);
    err = tunefleet_tuned::Gemm(queue, m, n, k, da, db, dc);
    if (err == CL_SUCCESS) {
      err = clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, c.size() * 4, c.data(),
                                0, nullptr, nullptr);
    }
    const double rel =
        err == CL_SUCCESS ? RelativeError(m, n, k, a, b, c) : INFINITY;
    const std::string workload = "gemm M=" + std::to_string(m) +
                                 " N=" + std::to_string(n) +
                                 " K=" + std::to_string(k) + " fp32";
    std::vector<float> c2(c.size(), 0.0f);
    const cl_mem buffers[3] = {da, db, dc};
    const float zero = 0;  // so that a Run that computes nothing fails
    clEnqueueFillBuffer(queue, dc, &zero, sizeof(zero), 0, c2.size() * 4, 0,
                        nullptr, nullptr);
    err = tunefleet_tuned::Run(queue, workload.c_str(), buffers, 3, nullptr, 0);
    if (err == CL_SUCCESS) {
      err = clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, c2.size() * 4, c2.data(),
                                0, nullptr, nullptr);
    }
    const double run_rel =
        err == CL_SUCCESS ? RelativeError(m, n, k, a, b, c2) : INFINITY;
    const tunefleet_tuned::GemmChoice choice =
        tunefleet_tuned::DescribeGemm(device, m, n, k);
    std::printf("%dx%dx%d %s %s %g %s [%s] g=%zu,%zu l=%zu,%zu run=%g\n", m, n,
                k, choice.shape_match.c_str(), choice.device_match.c_str(), rel,
                choice.config.c_str(), choice.build_options.c_str(),
                choice.global[0], choice.global[1], choice.local[0],
                choice.local[1], run_rel);
    if (!(rel < 1e-4) || !(run_rel < 1e-4)) ++failures;
    // The same workload in short forms `tunefleet tune --shape` takes.
    const std::string sm = std::to_string(m), sn = std::to_string(n),
                      sk = std::to_string(k);
    for (const std::string& form :
         {"gemm M=" + sm + ",N=" + sn + ",K=" + sk,
          "gemm K=" + sk + " fp32 N=" + sn + ";M=" + sm}) {
      if (tunefleet_tuned::CanonicalWorkload(form.c_str()) != workload ||
          tunefleet_tuned::DescribeRun(device, form.c_str()) !=
              tunefleet_tuned::DescribeRun(device, workload.c_str())) {
        std::printf("short form '%s' does not read as '%s'\n", form.c_str(),
                    workload.c_str());
        ++failures;
      }
    }
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
  }
  if (tunefleet_tuned::Gemm(queue, 0, 4, 4, nullptr, nullptr, nullptr) !=
      CL_INVALID_VALUE) {
    ++failures;
  }
  consumer_support::CloseQueue(context, queue);
  return failures == 0 ? 0 : 1;
}
