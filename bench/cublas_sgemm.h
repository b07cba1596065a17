// cuBLAS's SGEMM as a benchmark anchor, loaded at run time with dlopen
// (no CUDA headers or libraries at build time): the CUDA runtime
// (libcudart) for device memory and synchronisation, cuBLAS (libcublas)
// for cublasSgemm_v2. Used by bench/gpu_gemm beside the OpenCL kernels.
//
// Libraries: $TUNEFLEET_CUDART and $TUNEFLEET_CUBLAS (full paths) when
// set, else the sonames of CUDA 13 and 12 on the loader's path.
#ifndef TUNEFLEET_BENCH_CUBLAS_SGEMM_H_
#define TUNEFLEET_BENCH_CUBLAS_SGEMM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet::bench {

// One row-major FP32 GEMM problem C (M x N) = A (M x K) * B (K x N) on
// CUDA device 0, in buffers of its own (CUDA cannot use OpenCL's buffers
// without interop, which NVIDIA's OpenCL lacks): the caller copies in the
// same host data it gave the OpenCL buffers.
class CublasSgemm {
 public:
  // Loads the libraries, creates a cuBLAS handle (default math mode: no
  // TF32) and allocates A, B and C. Errors: UNAVAILABLE when a library or
  // a symbol is missing or a CUDA/cuBLAS call fails (with its code).
  static absl::StatusOr<std::unique_ptr<CublasSgemm>> Create(int m, int n,
                                                             int k);
  // Use Create(); the key keeps the constructor to it.
  struct Key {
   private:
    friend class CublasSgemm;
    Key() = default;
  };
  explicit CublasSgemm(Key);
  ~CublasSgemm();
  CublasSgemm(const CublasSgemm&) = delete;
  CublasSgemm& operator=(const CublasSgemm&) = delete;

  // Copies host A (M*K floats) and B (K*N floats) to the device.
  absl::Status Upload(const std::vector<float>& a, const std::vector<float>& b);
  // Enqueues one C = A * B (alpha 1, beta 0) on the default stream.
  // Errors: UNAVAILABLE with cuBLAS's status.
  absl::Status Run();
  // Waits for the device (cudaDeviceSynchronize).
  absl::Status Finish();
  // Copies C (M*N floats) back.
  absl::StatusOr<std::vector<float>> Download();
  // The libraries loaded, for the table's header.
  const std::string& describe() const { return describe_; }

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;  // cublasHandle_t
  float* a_ = nullptr;      // device pointers
  float* b_ = nullptr;
  float* c_ = nullptr;
  int m_ = 0, n_ = 0, k_ = 0;
  std::string describe_;
};

}  // namespace tunefleet::bench

#endif  // TUNEFLEET_BENCH_CUBLAS_SGEMM_H_
