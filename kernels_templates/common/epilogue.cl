// The fused epilogue of conv, dense and elementwise templates: what ONNX
// graphs express as Conv/Gemm followed by BatchNormalization, a skip
// connection's Add, an activation and a per-channel Mul/Add, folded into
// steps applied to the accumulated value y of output channel c, in this
// order (kernels_templates/workload.cc has the attrs):
//   AFFINE   0: none; 1: y + shift[c] (bias); 2: y * scale[c] + shift[c]
//            (batch normalisation folded into scale and shift, with any
//            bias folded into shift)
//   RESIDUAL 0: none; 1: y + r, r the residual tensor's element at the
//            output element's own index (a tensor of the output's shape;
//            epilogue_residual(), whose call sites load r)
//   ACT      0: none; 1: relu; 2: clip to [act_a, act_b] (relu6: 0, 6);
//            3: hardsigmoid max(0, min(1, act_a * y + act_b));
//            4: hardswish y * hardsigmoid(y) (ONNX HardSwish: 1/6, 0.5);
//            5: leakyrelu y >= 0 ? y : act_a * y (ONNX's alpha 0.01);
//            6: sigmoid 1 / (1 + exp(-y)); 7: silu y * sigmoid(y)
//   POST     0: none; 1: y * scale[EPI_C + c] + shift[EPI_C + c], the
//            affine step after the activation (e.g. PP-LCNetV3's learnable
//            affine blocks), kept in the same buffers after the first
//            EPI_C channels (EPI_C: the output's channels, -DEPI_C=...;
//            scale and shift then hold 2 * EPI_C floats)
#ifndef AFFINE
#define AFFINE 0
#endif
#ifndef ACT
#define ACT 0
#endif
#ifndef POST
#define POST 0
#endif
#ifndef RESIDUAL
#define RESIDUAL 0
#endif
#if POST && !defined(EPI_C)
#error "POST=1 needs EPI_C, the number of output channels"
#endif

// ACT of y, with its parameters act_a and act_b.
inline float epilogue_act(float y, float act_a, float act_b) {
#if ACT == 1
  y = fmax(y, 0.0f);
#elif ACT == 2
  y = clamp(y, act_a, act_b);
#elif ACT == 3
  y = clamp(act_a * y + act_b, 0.0f, 1.0f);
#elif ACT == 4
  y = y * clamp(act_a * y + act_b, 0.0f, 1.0f);
#elif ACT == 5
  y = y >= 0.0f ? y : act_a * y;
#elif ACT == 6
  y = 1.0f / (1.0f + exp(-y));
#elif ACT == 7
  y = y / (1.0f + exp(-y));
#endif
  return y;
}

// The whole epilogue of y with the residual value r (read only when
// RESIDUAL is 1; call sites load it at the output element's index).
inline float epilogue_residual(float y, float r, int c,
                               const __global float* scale,
                               const __global float* shift, float act_a,
                               float act_b) {
#if AFFINE == 2
  y = y * scale[c] + shift[c];
#elif AFFINE == 1
  y = y + shift[c];
#endif
#if RESIDUAL
  y = y + r;
#endif
  y = epilogue_act(y, act_a, act_b);
#if POST
  y = y * scale[EPI_C + c] + shift[EPI_C + c];
#endif
  return y;
}

// Stores the epilogue of y, the value of output element i (channel c), at
// output[i], with the residual's element i when RESIDUAL is 1 (a tensor of
// the output's shape). Needs common/dtype.cl before this file.
inline void epilogue_store(float y, size_t i, int c, __global real_t* output,
                           const __global float* scale,
                           const __global float* shift,
                           const __global real_t* residual, float act_a,
                           float act_b) {
#if RESIDUAL
  const float r = LOADF(residual, i);
#else
  const float r = 0.0f;
#endif
  STOREF(epilogue_residual(y, r, c, scale, shift, act_a, act_b), output, i);
}

// The epilogue without a residual (templates whose op has none; RESIDUAL
// must stay 0 for them).
inline float epilogue(float x, int c, const __global float* scale,
                      const __global float* shift, float act_a, float act_b) {
  return epilogue_residual(x, 0.0f, c, scale, shift, act_a, act_b);
}
