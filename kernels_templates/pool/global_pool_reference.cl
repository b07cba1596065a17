// Naive reference global pooling (NCHW): one work-item per plane (n, c),
// global size N*C, reducing its H*W elements in order. POOL_MAX selects max
// or average; needs common/dtype.cl before it. Used to verify candidates,
// as the speed baseline and as the fallback kernel.
__kernel void global_pool_reference(const int N, const int C, const int H,
                                    const int W, const __global real_t* input,
                                    __global real_t* output) {
  const size_t plane = get_global_id(0);
  if (plane >= (size_t)N * C) return;
  const size_t hw = (size_t)H * W;
  const __global real_t* in = input + plane * hw;
#if POOL_MAX
  float result = -INFINITY;
  for (size_t i = 0; i < hw; ++i) result = fmax(result, LOADF(in, i));
#else
  float result = 0.0f;
  for (size_t i = 0; i < hw; ++i) result += LOADF(in, i);
  result /= (float)hw;
#endif
  STOREF(result, output, plane);
}
