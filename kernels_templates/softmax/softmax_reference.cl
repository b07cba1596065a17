// Naive reference softmax over the last axis of an N x D tensor: one
// work-item per row, global size N, computing the row max, the sum of
// exp(x - max), then each output exp(x - max) / sum. Needs common/dtype.cl
// before it. Used to verify candidates, as the speed baseline and as the
// fallback kernel.
__kernel void softmax_reference(const int N, const int D,
                                const __global real_t* input,
                                __global real_t* output) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)N) return;
  const __global real_t* in = input + row * D;
  __global real_t* out = output + row * D;
  float m = -INFINITY;
  for (int d = 0; d < D; ++d) m = fmax(m, LOADF(in, d));
  float sum = 0.0f;
  for (int d = 0; d < D; ++d) sum += exp(LOADF(in, d) - m);
  for (int d = 0; d < D; ++d) STOREF(exp(LOADF(in, d) - m) / sum, out, d);
}
