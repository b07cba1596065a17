// ONNX Resize (opset 11+) source coordinates, shared by resize.cl and its
// reference. An output index x along an axis of in_len input and out_len
// output elements (scale = out_len / in_len) maps to x_original, here kept
// as an exact fraction num / den (den > 0) so that nearest's rounding ties
// (x_original = k + 0.5) are decided exactly, as the spec's formulas say,
// on every device:
//   COORD 0 half_pixel          (x + 0.5) / scale - 0.5
//         1 asymmetric          x / scale
//         2 align_corners       x * (in_len - 1) / (out_len - 1) (0 when
//                               out_len is 1)
//         3 pytorch_half_pixel  half_pixel, 0 when out_len is 1
// Nearest (MODE 0) takes ROUND 0 round_prefer_floor (ceil(x - 0.5)),
// 1 floor, 2 ceil of x_original; linear (MODE 1) interpolates between
// floor(x_original) and the next index. Indices are clamped to
// 0 .. in_len-1 (ONNX's edge padding). Workloads keep every numerator
// below 2^31 (resize_direct.toml).

// floor(num / den) for den > 0.
inline int floor_div(int num, int den) {
  return num >= 0 ? num / den : -((den - 1 - num) / den);
}

// x_original of output index x as (num, den).
inline int2 source_fraction(int x, int in_len, int out_len) {
#if COORD == 1
  return (int2)(x * in_len, out_len);
#elif COORD == 2
  if (out_len == 1) return (int2)(0, 1);
  return (int2)(x * (in_len - 1), out_len - 1);
#else
#if COORD == 3
  if (out_len == 1) return (int2)(0, 1);
#endif
  return (int2)((2 * x + 1) * in_len - out_len, 2 * out_len);
#endif
}

// Nearest: the input index of output index x.
inline int nearest_index(int x, int in_len, int out_len) {
  const int2 f = source_fraction(x, in_len, out_len);
#if ROUND == 0
  // ceil((2 num - den) / (2 den)) = -floor((den - 2 num) / (2 den))
  const int i = -floor_div(f.y - 2 * f.x, 2 * f.y);
#elif ROUND == 1
  const int i = floor_div(f.x, f.y);
#else
  const int i = -floor_div(-f.x, f.y);
#endif
  return clamp(i, 0, in_len - 1);
}

// Linear: the two input indices of output index x and the weight of the
// second, (i0, i1, lambda) as int2 and float.
inline int2 linear_indices(int x, int in_len, int out_len, float* lambda) {
  const int2 f = source_fraction(x, in_len, out_len);
  const int i0 = floor_div(f.x, f.y);
  *lambda = (float)(f.x - i0 * f.y) / (float)f.y;
  return (int2)(clamp(i0, 0, in_len - 1), clamp(i0 + 1, 0, in_len - 1));
}
