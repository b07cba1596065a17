// Naive reference GEMM: one work-item per element of C = A * B (row-major).
// Global size (N, M[, batch]). Used to verify candidates and as the speed
// baseline. Needs common/dtype.cl and common/epilogue.cl before it; the
// fused form takes EPILOGUE_AXIS as gemm.cl does, and its residual (of C's
// shape, batches included) with RESIDUAL=1.
#ifndef EPILOGUE_AXIS
#define EPILOGUE_AXIS 0
#endif

inline float gemm_reference_element(const int N, const int K,
                                    const __global real_t* A,
                                    const __global real_t* B, int m, int n) {
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) {
    sum += LOADF(A, (size_t)m * K + k) * LOADF(B, (size_t)k * N + n);
  }
  return sum;
}

__kernel void gemm_reference(const int M, const int N, const int K,
                             const __global real_t* A,
                             const __global real_t* B, __global real_t* C) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  if (m >= M || n >= N) return;
  STOREF(gemm_reference_element(N, K, A, B, m, n), C, (size_t)m * N + n);
}

__kernel void gemm_reference_fused(const int M, const int N, const int K,
                                   const __global real_t* A,
                                   const __global real_t* B,
                                   __global real_t* C,
                                   const __global float* scale,
                                   const __global float* shift,
                                   const __global real_t* residual,
                                   const float act_a, const float act_b) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  const size_t batch = get_global_id(2);
  if (m >= M || n >= N) return;
  B += batch * K * N;
  const float x = gemm_reference_element(N, K, A, B, m, n);
  const size_t i = batch * M * N + (size_t)m * N + n;
#if EPILOGUE_AXIS != 0
  epilogue_store(x, i, EPILOGUE_AXIS == 1 ? m : n, C, scale, shift, residual,
                 act_a, act_b);
#else
  STOREF(x, C, i);
#endif
}
