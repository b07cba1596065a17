// The part of CLBlast's C API (clblast_c.h, CLBlast 1.5) that the CLBlast
// backend calls, as function pointers read from the library with dlsym, so
// that the agent builds and runs without CLBlast. The declarations follow
// clblast_c.h of CLBlast 1.5.3; where that header is installed at build
// time, clblast_api.cc checks them against it.
#ifndef TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_API_H_
#define TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_API_H_

#include <CL/cl.h>

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet::library_backends {

// CLBlast's enums (C enums: int-sized), with clblast_c.h's values.
enum ClblastLayout : int { kClblastRowMajor = 101, kClblastColMajor = 102 };
enum ClblastTranspose : int { kClblastNoTranspose = 111 };
enum ClblastKernelMode : int { kClblastCrossCorrelation = 151 };
// CLBlastStatusCode: 0 is CLBlastSuccess; others as in ClblastStatusName.
using ClblastStatus = int;

// The entry points, each with the signature of its CLBlast namesake.
struct ClblastApi {
  // xGEMM and xGemmStridedBatched, of float (S) or cl_half (H) alpha and
  // beta.
  template <typename Scalar>
  using Gemm = ClblastStatus (*)(ClblastLayout, ClblastTranspose,
                                 ClblastTranspose, size_t m, size_t n, size_t k,
                                 Scalar alpha, cl_mem a, size_t a_offset,
                                 size_t a_ld, cl_mem b, size_t b_offset,
                                 size_t b_ld, Scalar beta, cl_mem c,
                                 size_t c_offset, size_t c_ld,
                                 cl_command_queue* queue, cl_event* event);
  template <typename Scalar>
  using GemmStridedBatched = ClblastStatus (*)(
      ClblastLayout, ClblastTranspose, ClblastTranspose, size_t m, size_t n,
      size_t k, Scalar alpha, cl_mem a, size_t a_offset, size_t a_ld,
      size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride,
      Scalar beta, cl_mem c, size_t c_offset, size_t c_ld, size_t c_stride,
      size_t batch_count, cl_command_queue* queue, cl_event* event);
  using Sgemm = Gemm<float>;
  using Hgemm = Gemm<cl_half>;
  using SgemmStridedBatched = GemmStridedBatched<float>;
  using HgemmStridedBatched = GemmStridedBatched<cl_half>;
  // Sconvgemm and Hconvgemm share this signature (buffers are cl_mem).
  using Convgemm = ClblastStatus (*)(
      ClblastKernelMode, size_t channels, size_t height, size_t width,
      size_t kernel_h, size_t kernel_w, size_t pad_h, size_t pad_w,
      size_t stride_h, size_t stride_w, size_t dilation_h, size_t dilation_w,
      size_t num_kernels, size_t batch_count, cl_mem im, size_t im_offset,
      cl_mem kernel, size_t kernel_offset, cl_mem result, size_t result_offset,
      cl_command_queue* queue, cl_event* event);

  Sgemm sgemm = nullptr;
  Hgemm hgemm = nullptr;
  SgemmStridedBatched sgemm_strided_batched = nullptr;
  HgemmStridedBatched hgemm_strided_batched = nullptr;
  Convgemm sconvgemm = nullptr;
  Convgemm hconvgemm = nullptr;
};

// Reads every entry point from `handle` (a dlopen handle). Errors:
// NOT_FOUND naming the first missing symbol (a CLBlast older than 1.5 has
// no convgemm).
absl::StatusOr<ClblastApi> ReadClblastApi(void* handle);

// "CLBlastNoHalfPrecision" for -2045, and so on, as clblast_c.h names the
// codes; "CLBlastStatusCode(<n>)" for a code it does not list.
std::string ClblastStatusName(ClblastStatus status);

// The half-precision bit patterns of 1 and 0 (the H routines' alpha, beta).
inline constexpr cl_half kHalfOne = 0x3C00;
inline constexpr cl_half kHalfZero = 0x0000;

}  // namespace tunefleet::library_backends

#endif  // TUNEFLEET_LIBRARY_BACKENDS_CLBLAST_API_H_
