// Naive reference GEMM: one work-item per element of C = A * B (row-major).
// Global size (N, M). Used to verify candidates and as the speed baseline.
__kernel void gemm_reference(const int M, const int N, const int K,
                             const __global float* A, const __global float* B,
                             __global float* C) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  if (m >= M || n >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[(size_t)m * K + k] * B[(size_t)k * N + n];
  C[(size_t)m * N + n] = sum;
}
