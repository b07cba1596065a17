// Runs the GEMM M x N x K (argv[1..3]) on the first OpenCL device through
// an emitted library whose entry for it needs scratch buffers (gemm_gpu
// with KSPLIT > 1: partial sums and per-tile counters the library keeps
// per command queue): Run() and both Gemm()s three times in a row on one
// queue, then alternating with a second queue, then three launches in a
// row on an out-of-order queue (where the device has one), each with new
// inputs and checked against a host reference in double precision. The
// caller passes A, B and C only. Prints
//   describe <shape_match> <device_match> <config>
//   case <name> <max_rel_error> OK|MISMATCH|ERROR <code>
//   scratch <name> <bytes>
// Exit code 0 when every case is OK.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "first_queue.h"
#include "tunefleet_tuned.h"

namespace {

int failures = 0;

// max |c - ref| / max |ref|, over the m x n matrices.
double RelError(const std::vector<float>& c, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(c[i]) - ref[i]);
    if (std::isnan(d)) return INFINITY;  // a NaN: not written
    err = std::fmax(err, d);
    scale = std::fmax(scale, std::fabs(ref[i]));
  }
  return err / (scale > 0 ? scale : 1);
}

// Waits for `queue`, reads C and prints the case's line.
void Check(const char* name, cl_int err, cl_command_queue queue, cl_mem c,
           const std::vector<double>& ref) {
  if (err == CL_SUCCESS) err = clFinish(queue);
  std::vector<float> out(ref.size(), 0.0f);
  if (err == CL_SUCCESS) {
    err = clEnqueueReadBuffer(queue, c, CL_TRUE, 0, out.size() * sizeof(float),
                              out.data(), 0, nullptr, nullptr);
  }
  if (err != CL_SUCCESS) {
    std::printf("case %s 0 ERROR %d\n", name, err);
    ++failures;
    return;
  }
  const double rel = RelError(out, ref);
  const bool ok = rel < 1e-4;
  failures += ok ? 0 : 1;
  std::printf("case %s %.3g %s\n", name, rel, ok ? "OK" : "MISMATCH");
}

// Fills C with NaN, so that a launch that writes nothing shows.
cl_int Poison(cl_command_queue queue, cl_mem c, size_t elements) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return clEnqueueFillBuffer(queue, c, &nan, sizeof(nan), 0,
                             elements * sizeof(float), 0, nullptr, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: emit_scratch_consumer M N K\n");
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]),
            k = std::atoi(argv[3]);
  const auto [device, context, queue] = consumer_support::OpenFirstQueue();
  if (queue == nullptr) return 3;
  cl_int err = CL_SUCCESS;
  cl_command_queue other = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return 3;

  const tunefleet_tuned::GemmChoice choice =
      tunefleet_tuned::DescribeGemm(device, m, n, k);
  std::printf("describe %s %s %s\n", choice.shape_match.c_str(),
              choice.device_match.c_str(), choice.config.c_str());

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
  std::vector<double> ref(size_t(m) * n, 0.0);
  cl_mem a_buf = clCreateBuffer(context, CL_MEM_READ_ONLY,
                                a.size() * sizeof(float), nullptr, &err);
  cl_mem b_buf = clCreateBuffer(context, CL_MEM_READ_ONLY,
                                b.size() * sizeof(float), nullptr, &err);
  if (err != CL_SUCCESS) return 3;
  // New A and B and their product before each case: a launch that added a
  // stale partial sum, or that a stale counter let skip C, shows.
  auto new_inputs = [&](cl_command_queue q) {
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    ref.assign(ref.size(), 0.0);
    for (int i = 0; i < m; ++i) {
      for (int p = 0; p < k; ++p) {
        for (int j = 0; j < n; ++j) {
          ref[size_t(i) * n + j] +=
              double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
        }
      }
    }
    clEnqueueWriteBuffer(q, a_buf, CL_TRUE, 0, a.size() * sizeof(float),
                         a.data(), 0, nullptr, nullptr);
    clEnqueueWriteBuffer(q, b_buf, CL_TRUE, 0, b.size() * sizeof(float),
                         b.data(), 0, nullptr, nullptr);
  };
  cl_mem c_bufs[3];
  for (cl_mem& c : c_bufs) {
    c = clCreateBuffer(context, CL_MEM_READ_WRITE, ref.size() * sizeof(float),
                       nullptr, &err);
  }
  if (err != CL_SUCCESS) return 3;
  cl_mem c_buf = c_bufs[0];
  const std::string workload = "gemm M=" + std::to_string(m) +
                               " N=" + std::to_string(n) +
                               " K=" + std::to_string(k);
  const cl_mem abc[3] = {a_buf, b_buf, c_buf};

  // One queue, three times in a row: the counters the first launch leaves
  // (zero) are the next one's.
  for (int i = 1; i <= 3; ++i) {
    new_inputs(queue);
    Poison(queue, c_buf, ref.size());
    cl_event done = nullptr;
    err = tunefleet_tuned::Run(queue, workload.c_str(), abc, 3, nullptr, 0,
                               &done);
    if (err == CL_SUCCESS) err = clWaitForEvents(1, &done);
    if (done != nullptr) clReleaseEvent(done);
    Check(("run_" + std::to_string(i)).c_str(), err, queue, c_buf, ref);
  }
  for (int i = 1; i <= 3; ++i) {
    new_inputs(queue);
    Poison(queue, c_buf, ref.size());
    err = tunefleet_tuned::Gemm(queue, m, n, k, a_buf, b_buf, c_buf);
    Check(("gemm_" + std::to_string(i)).c_str(), err, queue, c_buf, ref);
  }
  // The BLAS-style call with alpha and beta: the tuned kernel writes a
  // temporary, an epilogue kernel updates C.
  for (int i = 1; i <= 3; ++i) {
    new_inputs(queue);
    const float one = 1.0f;
    clEnqueueFillBuffer(queue, c_buf, &one, sizeof(one), 0,
                        ref.size() * sizeof(float), 0, nullptr, nullptr);
    err = tunefleet_tuned::Gemm(queue, tunefleet_tuned::Layout::kRowMajor,
                                tunefleet_tuned::Transpose::kNo,
                                tunefleet_tuned::Transpose::kNo, m, n, k, 2.0f,
                                a_buf, 0, k, b_buf, 0, n, 0.5f, c_buf, 0, n);
    std::vector<double> expected(ref);
    for (double& x : expected) x = 2 * x + 0.5;
    Check(("blas_alpha_beta_" + std::to_string(i)).c_str(), err, queue, c_buf,
          expected);
  }
  const size_t one_queue = tunefleet_tuned::CachedScratchBytes();
  std::printf("scratch one_queue %zu\n", one_queue);

  // Two queues, alternating: each has its own counters.
  for (int i = 1; i <= 3; ++i) {
    cl_command_queue q = i % 2 == 0 ? queue : other;
    new_inputs(q);
    Poison(q, c_buf, ref.size());
    err = tunefleet_tuned::Run(q, workload.c_str(), abc, 3, nullptr, 0);
    Check(("two_queues_" + std::to_string(i)).c_str(), err, q, c_buf, ref);
  }
  std::printf("scratch two_queues %zu\n",
              tunefleet_tuned::CachedScratchBytes());

  // The scratch is never the caller's: five buffers are refused.
  const cl_mem five[5] = {a_buf, b_buf, c_buf, c_bufs[1], c_bufs[2]};
  std::printf("case five_buffers_refused 0 %s\n",
              tunefleet_tuned::Run(queue, workload.c_str(), five, 5, nullptr,
                                   0) == CL_INVALID_VALUE
                  ? "OK"
                  : "MISMATCH");

  // An out-of-order queue: three launches enqueued at once, into three
  // outputs; each waits for the previous one's use of the scratch.
  cl_command_queue ooo = clCreateCommandQueue(
      context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  if (err == CL_SUCCESS) {
    new_inputs(ooo);
    for (cl_mem c : c_bufs) Poison(ooo, c, ref.size());
    clFinish(ooo);
    cl_int errs[3];
    for (int i = 0; i < 3; ++i) {
      const cl_mem bufs[3] = {a_buf, b_buf, c_bufs[i]};
      errs[i] =
          tunefleet_tuned::Run(ooo, workload.c_str(), bufs, 3, nullptr, 0);
    }
    for (int i = 0; i < 3; ++i) {
      Check(("out_of_order_" + std::to_string(i + 1)).c_str(), errs[i], ooo,
            c_bufs[i], ref);
    }
    tunefleet_tuned::ReleaseScratchBuffers(ooo);
    clReleaseCommandQueue(ooo);
  } else {
    std::printf("no out-of-order queue (%d)\n", err);
  }

  tunefleet_tuned::ReleaseScratchBuffers(other);
  std::printf("scratch released_other %zu\n",
              tunefleet_tuned::CachedScratchBytes());
  // After a release the next launch gets a new, zeroed scratch.
  new_inputs(queue);
  Poison(queue, c_buf, ref.size());
  tunefleet_tuned::ReleaseCachedPrograms();
  std::printf("scratch released_all %zu\n",
              tunefleet_tuned::CachedScratchBytes());
  err = tunefleet_tuned::Run(queue, workload.c_str(), abc, 3, nullptr, 0);
  Check("run_after_release", err, queue, c_buf, ref);
  tunefleet_tuned::ReleaseCachedPrograms();

  for (cl_mem c : c_bufs) clReleaseMemObject(c);
  clReleaseMemObject(a_buf);
  clReleaseMemObject(b_buf);
  clReleaseCommandQueue(other);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return failures == 0 ? 0 : 1;
}
