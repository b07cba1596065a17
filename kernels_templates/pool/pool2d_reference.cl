// Naive reference 2D pooling (NCHW): one work-item per output element,
// global size (Q, P, N*C). Max pooling ignores padding; average pooling
// divides by the in-bounds elements of the window (ONNX count_include_pad
// = 0). POOL_MAX selects the mode; needs common/dtype.cl before it. Used
// to verify candidates, as the speed baseline and as the fallback kernel.
__kernel void pool2d_reference(const int N, const int C, const int H,
                               const int W, const int R, const int S,
                               const int SH, const int SW, const int PH,
                               const int PW, const __global real_t* input,
                               __global real_t* output) {
  const int P = (H + 2 * PH - R) / SH + 1;
  const int Q = (W + 2 * PW - S) / SW + 1;
  const int q = get_global_id(0);
  const int p = get_global_id(1);
  const size_t plane = get_global_id(2);
  if (q >= Q || p >= P || plane >= (size_t)N * C) return;
  const __global real_t* in = input + plane * H * W;
#if POOL_MAX
  float result = -INFINITY;
#else
  float result = 0.0f;
#endif
  int count = 0;
  for (int r = 0; r < R; ++r) {
    const int h = p * SH - PH + r;
    if (h < 0 || h >= H) continue;
    for (int s = 0; s < S; ++s) {
      const int w = q * SW - PW + s;
      if (w < 0 || w >= W) continue;
      const float x = LOADF(in, (size_t)h * W + w);
#if POOL_MAX
      result = fmax(result, x);
#else
      result += x;
#endif
      ++count;
    }
  }
#if !POOL_MAX
  result /= (float)count;
#endif
  STOREF(result, output, (plane * P + p) * Q + q);
}
