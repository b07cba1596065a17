// The fused epilogue of conv and dense templates: what ONNX graphs express
// as Conv/Gemm followed by BatchNormalization and an activation, folded
// into one per-output-channel affine step and the activation:
//   AFFINE 0: none; 1: + shift[c] (bias); 2: * scale[c] + shift[c]
//             (batch normalisation folded into scale and shift, with any
//             bias folded into shift)
//   ACT    0: none; 1: relu; 2: clip to [act_a, act_b] (relu6: 0, 6);
//          3: hardsigmoid max(0, min(1, act_a * x + act_b));
//          4: hardswish x * hardsigmoid(x) (ONNX HardSwish: 1/6, 0.5).
#ifndef AFFINE
#define AFFINE 0
#endif
#ifndef ACT
#define ACT 0
#endif

inline float epilogue(float x, int c, const __global float* scale,
                      const __global float* shift, float act_a,
                      float act_b) {
#if AFFINE == 2
  x = x * scale[c] + shift[c];
#elif AFFINE == 1
  x = x + shift[c];
#endif
#if ACT == 1
  x = fmax(x, 0.0f);
#elif ACT == 2
  x = clamp(x, act_a, act_b);
#elif ACT == 3
  x = clamp(act_a * x + act_b, 0.0f, 1.0f);
#elif ACT == 4
  x = x * clamp(act_a * x + act_b, 0.0f, 1.0f);
#endif
  return x;
}
