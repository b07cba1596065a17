// Naive reference transposed 2D convolution (ONNX ConvTranspose), NCHW with
// groups (see conv_transpose2d.cl for the formula): one work-item per
// output element, global size (OW, OH, N*K), each summing the input taps
// that reach it. Verifies candidates, is the speed baseline and the
// fallback kernel of emitted libraries, so it stays simple: every shape is
// an argument. Needs common/dtype.cl and common/epilogue.cl before it.
__kernel void conv_transpose2d_reference(
    const int N, const int C, const int H, const int W, const int K,
    const int R, const int S, const int SH, const int SW, const int PH,
    const int PW, const int DH, const int DW, const int OPH, const int OPW,
    const int G, const int OH, const int OW, const __global real_t* input,
    const __global real_t* weight, __global real_t* output,
    const __global float* scale, const __global float* shift, const float act_a,
    const float act_b) {
  const int ow = get_global_id(0);
  const int oh = get_global_id(1);
  const int nk = get_global_id(2);
  if (ow >= OW || oh >= OH || nk >= N * K) return;
  const int n = nk / K;
  const int k = nk - n * K;
  const int Cg = C / G;
  const int Kg = K / G;
  const int g = k / Kg;
  const int kk = k - g * Kg;
  float sum = 0.0f;
  for (int c = 0; c < Cg; ++c) {
    const size_t cin = (size_t)g * Cg + c;
    for (int r = 0; r < R; ++r) {
      const int th = oh + PH - r * DH;
      if (th < 0 || th % SH != 0 || th / SH >= H) continue;
      const int ih = th / SH;
      for (int s = 0; s < S; ++s) {
        const int tw = ow + PW - s * DW;
        if (tw < 0 || tw % SW != 0 || tw / SW >= W) continue;
        const int iw = tw / SW;
        sum += LOADF(input, (((size_t)n * C + cin) * H + ih) * W + iw) *
               LOADF(weight, ((cin * Kg + kk) * R + r) * S + s);
      }
    }
  }
  const float x = epilogue(sum, k, scale, shift, act_a, act_b);
  STOREF(x, output, (((size_t)n * K + k) * OH + oh) * OW + ow);
}
