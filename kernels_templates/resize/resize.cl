// Tunable 2D resize (ONNX Resize, opset 11+) of an N x C x H x W tensor to
// N x C x OH x OW, nearest or bilinear (resize_coord.cl gives the
// coordinate modes and rounding). Any sizes.
//
// Knobs (build-time defines, see resize_direct.toml):
//   WGQ, WGP  work-group size along OW and OH (dimension 0 and 1)
//   QWI       consecutive output columns per work-item, stored as one
//             vector (VW = QWI)
//   PWI       output rows per work-item
//   CPW       planes (n, c) per work-item: the source indices and weights
//             of its columns and rows are computed once for all of them
// Global size (ceil(OW / QWI), ceil(OH / PWI), ceil(N*C / CPW)), rounded
// up to whole work-groups; work-items past the output store nothing.
// Entry point: resize(planes, H, W, OH, OW, input, output).
// Needs common/dtype.cl, common/vector.cl and resize_coord.cl before it.

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, 1))) void resize(
    const int planes, const int H, const int W, const int OH, const int OW,
    const __global real_t* restrict input, __global real_t* restrict output) {
  const int q0 = get_global_id(0) * QWI;
  const int p0 = get_global_id(1) * PWI;
  const int plane0 = get_global_id(2) * CPW;
  if (q0 >= OW || p0 >= OH || plane0 >= planes) return;

  // Source columns of this work-item's columns (past OW: the last one).
  int col0[QWI];
#if MODE == 1
  int col1[QWI];
  float wx[QWI];
#endif
  for (int q = 0; q < QWI; ++q) {
    const int x = min(q0 + q, OW - 1);
#if MODE == 0
    col0[q] = nearest_index(x, W, OW);
#else
    const int2 c = linear_indices(x, W, OW, &wx[q]);
    col0[q] = c.x;
    col1[q] = c.y;
#endif
  }
  int row0[PWI];
#if MODE == 1
  int row1[PWI];
  float wy[PWI];
#endif
  for (int p = 0; p < PWI; ++p) {
    const int y = min(p0 + p, OH - 1);
#if MODE == 0
    row0[p] = nearest_index(y, H, OH) * W;
#else
    const int2 r = linear_indices(y, H, OH, &wy[p]);
    row0[p] = r.x * W;
    row1[p] = r.y * W;
#endif
  }

  for (int k = 0; k < CPW; ++k) {
    const int plane = plane0 + k;
    if (plane >= planes) break;
    const __global real_t* in = input + (size_t)plane * H * W;
    __global real_t* out = output + (size_t)plane * OH * OW;
    for (int p = 0; p < PWI; ++p) {
      if (p0 + p >= OH) break;
#if MODE == 0
#define AT(q) LOADF(in, row0[p] + col0[q])
#else
      const __global real_t* top = in + row0[p];
      const __global real_t* bottom = in + row1[p];
      const float ly = wy[p];
#define LERP(r, q) \
  (LOADF(r, col0[q]) + wx[q] * (LOADF(r, col1[q]) - LOADF(r, col0[q])))
#define AT(q) (LERP(top, q) + ly * (LERP(bottom, q) - LERP(top, q)))
#endif
      const floatv v = GATHER(AT);
#undef AT
#ifdef LERP
#undef LERP
#endif
      store_vector(out + (size_t)(p0 + p) * OW, q0, OW, v);
    }
  }
}
