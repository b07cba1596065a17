// Naive reference 2D resize (ONNX Resize, see resize_coord.cl for the
// coordinate modes): one work-item per output element, global size
// (OW, OH, N*C). Verifies candidates, is the speed baseline and the
// fallback kernel of emitted libraries, so it stays simple. Needs
// common/dtype.cl and resize_coord.cl before it.
__kernel void resize_reference(const int planes, const int H, const int W,
                               const int OH, const int OW,
                               const __global real_t* input,
                               __global real_t* output) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int plane = get_global_id(2);
  if (x >= OW || y >= OH || plane >= planes) return;
  const __global real_t* in = input + (size_t)plane * H * W;
#if MODE == 0
  const float v =
      LOADF(in, nearest_index(y, H, OH) * W + nearest_index(x, W, OW));
#else
  float lx, ly;
  const int2 c = linear_indices(x, W, OW, &lx);
  const int2 r = linear_indices(y, H, OH, &ly);
  const float v00 = LOADF(in, r.x * W + c.x), v01 = LOADF(in, r.x * W + c.y);
  const float v10 = LOADF(in, r.y * W + c.x), v11 = LOADF(in, r.y * W + c.y);
  const float top = (1.0f - lx) * v00 + lx * v01;
  const float bottom = (1.0f - lx) * v10 + lx * v11;
  const float v = (1.0f - ly) * top + ly * bottom;
#endif
  STOREF(v, output, ((size_t)plane * OH + y) * OW + x);
}
