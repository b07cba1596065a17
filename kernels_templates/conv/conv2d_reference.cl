// Naive reference direct convolution, NCHW with groups (see conv2d.cl for
// the formula): one work-item per output element, global size (Q, P, N*K).
// Verifies candidates, is the speed baseline and the fallback kernel of
// emitted libraries, so it stays simple: every shape is an argument.
// Needs common/dtype.cl and common/epilogue.cl before it.
__kernel void conv2d_reference(
    const int N, const int C, const int H, const int W, const int K,
    const int R, const int S, const int SH, const int SW, const int PH,
    const int PW, const int DH, const int DW, const int G, const int P,
    const int Q, const __global real_t* input, const __global real_t* weight,
    __global real_t* output, const __global float* scale,
    const __global float* shift, const __global real_t* residual,
    const float act_a, const float act_b) {
  const int q = get_global_id(0);
  const int p = get_global_id(1);
  const int nk = get_global_id(2);
  if (q >= Q || p >= P || nk >= N * K) return;
  const int n = nk / K;
  const int k = nk - n * K;
  const int Cg = C / G;
  const int g = k / (K / G);
  float sum = 0.0f;
  for (int c = 0; c < Cg; ++c) {
    const size_t plane = (size_t)n * C + (size_t)g * Cg + c;
    for (int r = 0; r < R; ++r) {
      const int ih = p * SH - PH + r * DH;
      if (ih < 0 || ih >= H) continue;
      for (int s = 0; s < S; ++s) {
        const int iw = q * SW - PW + s * DW;
        if (iw < 0 || iw >= W) continue;
        sum += LOADF(input, (plane * H + ih) * W + iw) *
               LOADF(weight, (((size_t)k * Cg + c) * R + r) * S + s);
      }
    }
  }
  const size_t i = (((size_t)n * K + k) * P + p) * Q + q;
  epilogue_store(sum, i, k, output, scale, shift, residual, act_a, act_b);
}
