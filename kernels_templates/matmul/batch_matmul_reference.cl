// Naive reference batched matrix product: one work-item per element of
// C[b] = A[b] * B[b] (row-major, tight), global size (N, M, batch).
// Verifies candidates and is the speed baseline. Needs common/dtype.cl
// before it.
__kernel void batch_matmul_reference(const int batch, const int M, const int N,
                                     const int K, const __global real_t* A,
                                     const __global real_t* B,
                                     __global real_t* C) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  const size_t b = get_global_id(2);
  if (m >= M || n >= N || b >= (size_t)batch) return;
  A += b * M * K;
  B += b * K * N;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) {
    sum += LOADF(A, (size_t)m * K + k) * LOADF(B, (size_t)k * N + n);
  }
  STOREF(sum, C, (b * M + m) * N + n);
}
