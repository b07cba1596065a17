// Tunable global pooling (max or average) over NCHW: output[n, c] =
// max or mean of input[n, c, :, :], one output per plane (n, c); output
// N x C (x 1 x 1). Any N, C, H, W >= 1.
//
// Knobs (build-time defines, see global_pool_reduce.toml):
//   WPC     work-items per plane, cooperating on its H*W reduction: each
//           reduces a strided share, then a tree reduction in local memory
//           (a power of two, 1 .. 256)
//   CPG     planes per work-group (work-group WPC x CPG)
//   VW      elements per work-item per step (vector loads)
//   UNROLL  steps per loop iteration, each into its own accumulator
// Mode define: POOL_MAX 1: max pooling, 0: average pooling.
// Entry point: global_pool(N, C, H, W, input, output).
// Needs common/dtype.cl, common/vector.cl and pool/pool_mode.cl before it.
//
// Work-item tx of a plane reads vectors tx, tx + WPC, tx + 2*WPC, ... of
// VW elements (coalesced across the plane's work-items on GPUs); the last
// H*W % VW elements are read one by one. Work-items of planes past N*C
// read the last plane and store nothing.

#define WGS (WPC * CPG)

// Combines the lanes of a vector.
inline float combine_lanes(floatv v) {
#if POOL_MAX
  return max_lanes(v);
#else
  return sum_lanes(v);
#endif
}

__kernel __attribute__((reqd_work_group_size(WPC, CPG, 1))) void global_pool(
    const int N, const int C, const int H, const int W,
    const __global real_t* restrict input, __global real_t* restrict output) {
#if WPC > 1
  __local float partial[CPG * WPC];
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int planes = N * C;
  const int plane = get_group_id(1) * CPG + ty;
  const int hw = H * W;
  const __global real_t* in = input + (size_t)min(plane, planes - 1) * hw;

  floatv acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = (floatv)(PAD_VALUE);
  const int vectors = hw / VW;  // whole vectors of the plane
  int v = tx;
  for (; v + (UNROLL - 1) * WPC < vectors; v += UNROLL * WPC) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      acc[u] = COMBINE(acc[u], VLOAD_G(in + (size_t)(v + u * WPC) * VW));
    }
  }
  for (; v < vectors; v += WPC) {
    acc[0] = COMBINE(acc[0], VLOAD_G(in + (size_t)v * VW));
  }
  for (int u = 1; u < UNROLL; ++u) acc[0] = COMBINE(acc[0], acc[u]);
  float x = combine_lanes(acc[0]);
  for (int e = vectors * VW + tx; e < hw; e += WPC) {
    x = COMBINE(x, LOADF(in, e));
  }

#if WPC > 1
  // Tree reduction; every work-item reaches every barrier (the loop's trip
  // count is the same for all).
  __local float* mine = partial + ty * WPC;
  mine[tx] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = WPC / 2; stride > 0; stride >>= 1) {
    if (tx < stride) mine[tx] = COMBINE(mine[tx], mine[tx + stride]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  x = mine[0];
#endif

  if (tx == 0 && plane < planes) {
#if !POOL_MAX
    x /= (float)hw;
#endif
    STOREF(x, output, plane);
  }
}
