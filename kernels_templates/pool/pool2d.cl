// Tunable 2D pooling (max or average), NCHW, one plane per (n, c):
//   input  N x C x H x W,
//   output N x C x P x Q with P = (H + 2*PH - R) / SH + 1 and
//          Q = (W + 2*PW - S) / SW + 1 (floor: ONNX ceil_mode=0).
// Window R x S, strides SH x SW, symmetric zero padding PH, PW, no
// dilation. Max pooling ignores padding; average pooling divides by the
// number of in-bounds elements of each window (ONNX count_include_pad=0).
// The host refuses shapes whose windows could lie wholly in the padding
// (2*PH > R or 2*PW > S), so every window has an in-bounds element.
//
// Knobs (build-time defines, see pool2d_direct.toml):
//   PWI, QWI       output rows / columns per work-item (register tile)
//   WGQ, WGP, WGC  work-group shape over Q, P and planes (N*C)
//   CWG            planes per work-group (each work-item does CWG/WGC)
//   VW             vector width along Q (loads and stores)
//   LT             1: stage the work-group's input tile (with its halo)
//                  in local memory, 0: read global memory directly
//   UNR            1: window dims are compile-time constants (KR, KS, KSH,
//                  KSW, KPH, KPW) and the window loops are unrolled fully;
//                  0: window dims come from the kernel arguments
// Mode and shape-class defines (computed by the host from the workload):
//   POOL_MAX       1: max pooling, 0: average pooling
//   SWC            1 or 2 when SW is 1 or 2 (contiguous or even-lane
//                  vector loads), else 0 (per-lane gathers)
//   TILE_H, TILE_W local tile rows and columns (LT=1): (PWG-1)*SH + R and
//                  (QWG-1)*SW + S, plus one column when SWC=2 and VW>1 (the
//                  even-lane load reads one element past the last lane)
// Entry point: pool2d(N, C, H, W, R, S, SH, SW, PH, PW, input, output).
// Needs common/dtype.cl, common/vector.cl and pool/pool_mode.cl before it.
//
// Work-item (tx, ty, tz) of a work-group owns output rows
// p = p0 + i*WGP + ty, column vectors q = q0 + (j*WGQ + tx)*VW .. +VW-1 and
// planes c0 + k*WGC + tz, a strided layout (coalesced along Q on GPUs).
// Outputs past P, Q or N*C are computed from clamped or padded reads and
// never stored.

#define PWG (WGP * PWI)
#define QWG (WGQ * QWI)
#define CWI (CWG / WGC)
#define NVEC (QWI / VW)
#define WGS (WGQ * WGP * WGC)

#if UNR
#define WIN_R KR
#define WIN_S KS
#define WIN_SH KSH
#define WIN_SW KSW
#define WIN_PH KPH
#define WIN_PW KPW
#define WINDOW_LOOP _Pragma("unroll")
#else
#define WIN_R R
#define WIN_S S
#define WIN_SH SH
#define WIN_SW SW
#define WIN_PH PH
#define WIN_PW PW
#define WINDOW_LOOP
#endif

// Lane types along Q beyond common/vector.cl's: intv column indices, LANES
// the lane offsets 0..VW-1. VLOAD2_L / VLOAD2_G load 2*VW floats of local
// memory / of a tensor of the storage type (the even-lane loads of SWC=2).
#if VW == 1
typedef int intv;
#define LANES 0
#define CONVERT_FLOATV(x) ((float)(x))
#elif VW == 2
typedef int2 intv;
#define LANES ((int2)(0, 1))
#define CONVERT_FLOATV(x) convert_float2(x)
#define VLOAD2_L(p) vload4(0, (p))
#elif VW == 4
typedef int4 intv;
#define LANES ((int4)(0, 1, 2, 3))
#define CONVERT_FLOATV(x) convert_float4(x)
#define VLOAD2_L(p) vload8(0, (p))
#else
#error "VW must be 1, 2 or 4"
#endif
#if VW == 2 && DTYPE_FP16
#define VLOAD2_G(p) vload_half4(0, (p))
#elif VW == 2
#define VLOAD2_G(p) vload4(0, (p))
#elif VW == 4 && DTYPE_FP16
#define VLOAD2_G(p) VLOAD_HALF8(p)
#elif VW == 4
#define VLOAD2_G(p) vload8(0, (p))
#endif

#if !LT
// Input columns w, w + SW, ..., w + (VW-1)*SW of an in-bounds input row;
// columns outside 0..W-1 read PAD_VALUE.
inline floatv load_global_vector(const __global real_t* row, int w, int W,
                                 int sw) {
#if SWC == 1 && VW > 1
  if (w >= 0 && w + VW <= W) return VLOAD_G(row + w);
#elif SWC == 2 && VW > 1
  if (w >= 0 && w + 2 * VW <= W) return VLOAD2_G(row + w).even;
#endif
#define AT(v)                                                         \
  ((w + (v) * sw >= 0 && w + (v) * sw < W) ? LOADF(row, w + (v) * sw) \
                                           : PAD_VALUE)
  return GATHER(AT);
#undef AT
}
#else
// Tile columns c, c + SW, ..., c + (VW-1)*SW of a local tile row.
inline floatv load_local_vector(const __local float* row, int c, int sw) {
#if SWC == 1 && VW > 1
  return VLOAD_L(row + c);
#elif SWC == 2 && VW > 1
  return VLOAD2_L(row + c).even;
#else
#define AT(v) (row[c + (v) * sw])
  return GATHER(AT);
#undef AT
#endif
}

// Copies the input tile of the work-group's CWG planes into `tile`
// (CWG x TILE_H x TILE_W floats); padding and rows or columns outside the
// input read PAD_VALUE, planes past the last read the last plane.
inline void stage_tile(const __global real_t* restrict input,
                       __local float* tile, int H, int W, int planes, int c0,
                       int h0, int w0, int lid) {
  const size_t plane_size = (size_t)H * W;
  for (int idx = lid; idx < CWG * TILE_H * TILE_W; idx += WGS) {
    const int c = idx / (TILE_H * TILE_W);
    const int rest = idx - c * (TILE_H * TILE_W);
    const int h = h0 + rest / TILE_W;
    const int w = w0 + rest % TILE_W;
    const size_t plane = min(c0 + c, planes - 1);
    tile[idx] = (h >= 0 && h < H && w >= 0 && w < W)
                    ? LOADF(input, plane * plane_size + (size_t)h * W + w)
                    : PAD_VALUE;
  }
}
#endif

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, WGC))) void pool2d(
    const int N, const int C, const int H, const int W, const int R,
    const int S, const int SH, const int SW, const int PH, const int PW,
    const __global real_t* restrict input, __global real_t* restrict output) {
#if LT
  __local float tile[CWG * TILE_H * TILE_W];
#endif
  const int P = (H + 2 * WIN_PH - WIN_R) / WIN_SH + 1;
  const int Q = (W + 2 * WIN_PW - WIN_S) / WIN_SW + 1;
  const int planes = N * C;
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tz = get_local_id(2);
  const int q0 = get_group_id(0) * QWG;
  const int p0 = get_group_id(1) * PWG;
  const int c0 = get_group_id(2) * CWG;
  const size_t plane_size = (size_t)H * W;

#if LT
  // One staging phase: every work-item reaches the barrier.
  stage_tile(input, tile, H, W, planes, c0, p0 * WIN_SH - WIN_PH,
             q0 * WIN_SW - WIN_PW, (tz * WGP + ty) * WGQ + tx);
  barrier(CLK_LOCAL_MEM_FENCE);
#endif

  for (int k = 0; k < CWI; ++k) {
    const int plane = c0 + k * WGC + tz;
#if LT
    const __local float* tplane = tile + (k * WGC + tz) * (TILE_H * TILE_W);
#else
    const __global real_t* in =
        input + (size_t)min(plane, planes - 1) * plane_size;
#endif
    floatv acc[PWI][NVEC];
    for (int i = 0; i < PWI; ++i)
      for (int j = 0; j < NVEC; ++j) acc[i][j] = (floatv)(PAD_VALUE);

    WINDOW_LOOP
    for (int r = 0; r < WIN_R; ++r) {
      for (int i = 0; i < PWI; ++i) {
        const int pl = i * WGP + ty;  // output row inside the tile
#if LT
        const __local float* trow = tplane + (pl * WIN_SH + r) * TILE_W;
#else
        const int h = (p0 + pl) * WIN_SH - WIN_PH + r;
        if (h < 0 || h >= H) continue;  // padding rows add nothing
        const __global real_t* irow = in + (size_t)h * W;
#endif
        WINDOW_LOOP
        for (int s = 0; s < WIN_S; ++s) {
          for (int j = 0; j < NVEC; ++j) {
            const int ql = (j * WGQ + tx) * VW;  // output column in tile
#if LT
            const floatv x =
                load_local_vector(trow, ql * WIN_SW + s, WIN_SW);
#else
            const floatv x = load_global_vector(
                irow, (q0 + ql) * WIN_SW - WIN_PW + s, W, WIN_SW);
#endif
            acc[i][j] = COMBINE(acc[i][j], x);
          }
        }
      }
    }

    if (plane >= planes) continue;
    __global real_t* out = output + (size_t)plane * P * Q;
    for (int i = 0; i < PWI; ++i) {
      const int p = p0 + i * WGP + ty;
      if (p >= P) continue;
#if !POOL_MAX
      // In-bounds rows and columns of each window (count_include_pad=0).
      const int hs = p * WIN_SH - WIN_PH;
      const int rows = min(hs + WIN_R, H) - max(hs, 0);
#endif
      for (int j = 0; j < NVEC; ++j) {
        const int q = q0 + (j * WGQ + tx) * VW;
        floatv v = acc[i][j];
#if !POOL_MAX
        const intv ws = (q + LANES) * WIN_SW - WIN_PW;
        const intv cols = min(ws + WIN_S, (intv)(W)) - max(ws, (intv)(0));
        v = v / CONVERT_FLOATV(cols * rows);
#endif
        store_vector(out + (size_t)p * Q, q, Q, v);
      }
    }
  }
}
