// Naive reference layer normalisation over the last axis of an N x D
// tensor (see layernorm.cl for the formula): one work-item per row, global
// size N; the mean, then the biased variance of the deviations from it
// (two passes), then each output. Verifies candidates, is the speed
// baseline and the fallback kernel of emitted libraries. Needs
// common/dtype.cl before it.
__kernel void layernorm_reference(const int N, const int D, const float eps,
                                  const __global real_t* input,
                                  __global real_t* output,
                                  const __global float* gamma,
                                  const __global float* beta) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)N) return;
  const __global real_t* in = input + row * D;
  __global real_t* out = output + row * D;
  float sum = 0.0f;
  for (int d = 0; d < D; ++d) sum += LOADF(in, d);
  const float mean = sum / (float)D;
  float m2 = 0.0f;
  for (int d = 0; d < D; ++d) {
    const float dev = LOADF(in, d) - mean;
    m2 += dev * dev;
  }
  const float inv_std = 1.0f / sqrt(m2 / (float)D + eps);
  for (int d = 0; d < D; ++d) {
    float y = (LOADF(in, d) - mean) * inv_std;
#if AFFINE
    y = y * gamma[d] + beta[d];
#endif
    STOREF(y, out, d);
  }
}
