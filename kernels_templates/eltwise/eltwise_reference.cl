// Naive reference elementwise op (see eltwise.cl for the formula): one
// work-item per output element, global size N*C*H*W. Verifies candidates,
// is the speed baseline and the fallback kernel of emitted libraries, so it
// stays simple. Needs common/dtype.cl and common/epilogue.cl before it;
// FN and BMODE as in eltwise.cl (fns of A alone leave b unread).
__kernel void eltwise_reference(const int total, const int C, const int HW,
                                const __global real_t* a,
                                const __global real_t* b,
                                __global real_t* output,
                                const __global float* scale,
                                const __global float* shift,
                                const __global real_t* residual,
                                const float act_a, const float act_b) {
  const int i = get_global_id(0);
  if (i >= total) return;
  const int plane = i / HW;
  const int c = plane % C;
  const float x = LOADF(a, i);
#if FN == 0
  const float y = x;
#elif FN == 7
  const float y = sqrt(x);
#elif FN == 8
  const float y = exp(x);
#elif FN == 9
  const float y = log(x);
#elif FN == 10
  const float y = fabs(x);
#elif FN == 11
  const float y = -x;
#elif FN == 12
  const float y = 1.0f / x;
#elif FN == 13
  const float y = tanh(x);
#elif FN == 14
  const float y = erf(x);
#elif FN == 16
  const float y = floor(x);
#elif FN == 17
  const float y = ceil(x);
#elif FN == 18
  const float y = rint(x);
#elif FN == 19
  const float y = sign(x);
#else
#if BMODE == 0
  const float v = LOADF(b, i);
#elif BMODE == 1
  const float v = LOADF(b, 0);
#elif BMODE == 2
  const float v = LOADF(b, c);
#else
  const float v = LOADF(b, plane);
#endif
#if FN == 1
  const float y = x + v;
#elif FN == 2
  const float y = x - v;
#elif FN == 3
  const float y = x * v;
#elif FN == 4
  const float y = x / v;
#elif FN == 5
  const float y = fmax(x, v);
#elif FN == 6
  const float y = fmin(x, v);
#else
  const float y = pow(x, v);
#endif
#endif
  epilogue_store(y, i, c, output, scale, shift, residual, act_a, act_b);
}
