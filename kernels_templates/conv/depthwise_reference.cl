// Naive reference depthwise convolution, NCHW, channel multiplier 1 (see
// depthwise.cl for the formula): one work-item per output element, global
// size (Q, P, N*C). Verifies candidates, is the speed baseline and the
// fallback kernel of emitted libraries, so it stays simple: every shape is
// an argument. Needs common/dtype.cl and common/epilogue.cl before it.
__kernel void depthwise_reference(
    const int N, const int C, const int H, const int W, const int R,
    const int S, const int SH, const int SW, const int PH, const int PW,
    const int DH, const int DW, const int P, const int Q,
    const __global real_t* input, const __global real_t* weight,
    __global real_t* output, const __global float* scale,
    const __global float* shift, const __global real_t* residual,
    const float act_a, const float act_b) {
  const int q = get_global_id(0);
  const int p = get_global_id(1);
  const int nc = get_global_id(2);
  if (q >= Q || p >= P || nc >= N * C) return;
  const int c = nc % C;
  float sum = 0.0f;
  for (int r = 0; r < R; ++r) {
    const int ih = p * SH - PH + r * DH;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < S; ++s) {
      const int iw = q * SW - PW + s * DW;
      if (iw < 0 || iw >= W) continue;
      sum += LOADF(input, ((size_t)nc * H + ih) * W + iw) *
             LOADF(weight, ((size_t)c * R + r) * S + s);
    }
  }
  const size_t i = ((size_t)nc * P + p) * Q + q;
  epilogue_store(sum, i, c, output, scale, shift, residual, act_a, act_b);
}
