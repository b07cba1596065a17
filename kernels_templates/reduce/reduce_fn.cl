// The reductions of op reduce (attr fn, as RED_FN), for reduce.cl:
//   0 sum, 1 mean (sum / R), 2 max, 3 min, 4 prod, 5 sumsquare (sum x^2),
//   6 l1 (sum |x|), 7 l2 (sqrt of sum x^2), 8 logsum (log of sum),
//   9 logsumexp (max m, then m + log(sum exp(x - m)))
// as an accumulator red_t, its start RED_INIT, red_add(a, x) of one input
// value, red_combine(a, b) of two partial results and red_final(a, R).
// logsumexp keeps (m, s): the running maximum m and the sum s of
// exp(x - m), rescaled when m grows (the "online" form; exact up to
// rounding against max-then-sum).
#if RED_FN == 9
typedef float2 red_t;
#define RED_INIT ((float2)(-INFINITY, 0.0f))
inline red_t red_combine(red_t a, red_t b) {
  const float m = fmax(a.x, b.x);
  if (m == -INFINITY) return a;
  return (float2)(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}
inline red_t red_add(red_t a, float x) {
  return red_combine(a, (float2)(x, 1.0f));
}
inline float red_final(red_t a, int R) { return a.x + log(a.y); }
#else
typedef float red_t;
#if RED_FN == 2
#define RED_INIT (-INFINITY)
#elif RED_FN == 3
#define RED_INIT INFINITY
#elif RED_FN == 4
#define RED_INIT 1.0f
#else
#define RED_INIT 0.0f
#endif
inline red_t red_combine(red_t a, red_t b) {
#if RED_FN == 2
  return fmax(a, b);
#elif RED_FN == 3
  return fmin(a, b);
#elif RED_FN == 4
  return a * b;
#else
  return a + b;
#endif
}
inline red_t red_add(red_t a, float x) {
#if RED_FN == 5 || RED_FN == 7
  return a + x * x;
#elif RED_FN == 6
  return a + fabs(x);
#else
  return red_combine(a, x);
#endif
}
inline float red_final(red_t a, int R) {
#if RED_FN == 1
  return a / (float)R;
#elif RED_FN == 7
  return sqrt(a);
#elif RED_FN == 8
  return log(a);
#else
  return a;
#endif
}
#endif
