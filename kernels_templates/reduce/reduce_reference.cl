// Naive reference reduction (see reduce.cl): one work-item per output
// (o, i), global size O*I, the R values of its column in order, in float;
// logsumexp as max, then the sum of exp(x - max). Verifies candidates, is
// the speed baseline and the fallback kernel of emitted libraries, so it
// stays simple. Needs common/dtype.cl before it; FN as reduce_fn.cl's.
__kernel void reduce_reference(const int O, const int R, const int I,
                               const __global real_t* input,
                               __global real_t* output) {
  const int t = get_global_id(0);
  if (t >= O * I) return;
  const int o = t / I, i = t % I;
  const __global real_t* column = input + (size_t)o * R * I + i;
#if FN == 9
  float m = -INFINITY;
  for (int r = 0; r < R; ++r) m = fmax(m, LOADF(column, (size_t)r * I));
  float y = 0.0f;
  for (int r = 0; r < R; ++r) y += exp(LOADF(column, (size_t)r * I) - m);
  y = m + log(y);
#else
  float y = FN == 2 ? -INFINITY : FN == 3 ? INFINITY : FN == 4 ? 1.0f : 0.0f;
  for (int r = 0; r < R; ++r) {
    const float x = LOADF(column, (size_t)r * I);
#if FN == 2
    y = fmax(y, x);
#elif FN == 3
    y = fmin(y, x);
#elif FN == 4
    y = y * x;
#elif FN == 5 || FN == 7
    y = y + x * x;
#elif FN == 6
    y = y + fabs(x);
#else
    y = y + x;
#endif
  }
#if FN == 1
  y = y / (float)R;
#elif FN == 7
  y = sqrt(y);
#elif FN == 8
  y = log(y);
#endif
#endif
  STOREF(y, output, t);
}
