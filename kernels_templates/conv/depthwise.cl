// Tunable depthwise 2D convolution (channel multiplier 1), NCHW, with a
// fused epilogue.
//   input  N x C x H x W, weight C x 1 x R x S, output N x C x P x Q with
//   P = (H + 2*PH - DH*(R-1) - 1) / SH + 1 and Q likewise (W, S, SW, PW,
//   DW); zero padding:
//     output[n][c][p][q] = epilogue(sum over r < R, s < S of
//         input[n][c][p*SH - PH + r*DH][q*SW - PW + s*DW] * weight[c][r][s],
//         channel c, residual[n][c][p][q])
//   (common/epilogue.cl; the residual, of the output's shape, is read only
//   with RESIDUAL=1)
//
// Knobs (build-time defines, see depthwise_direct.toml):
//   PWI, QWI   output rows / columns per work-item (register tile)
//   WGP, WGQ   work-items per work-group along P / along Q
//   CWG        channels per work-group (one per work-item along dim 2)
//   VW         vector width along Q of accumulators, loads and stores
//   LI         1: stage the work-group's input tile, halo included, in
//              __local
//   UNROLL     unroll factor of the loop over the R*S window taps
//   HALF       1: products and accumulators in half (cl_khr_fp16, fp16
//              storage; common/dtype.cl), 0: in float
//   IMI        1: read the input through an image2d_t of texels of four
//              pixels along W (conv/direct_conv.cl), 0: from a buffer
//   RT         1: register-tiled rows (needs LI=0, IMI=0): a work-item
//              computes PWI consecutive rows by QWI consecutive columns,
//              reading each input row it needs once into registers
//              ((QWI-1)*SW + (S-1)*DW + 1 pixels; with SW=1 the QWI
//              pixels under its columns as aligned VW-wide loads, the halo
//              as single loads that the neighbours' loads left in the
//              cache) and using it for every output row and tap it feeds;
//              no local memory and no barrier. 0: the strided layout
//              below
// Window defines (the workload's, compiled in so that the tap loop unrolls
// and the local tile has a static size): WR, WS, WSH, WSW, WPH, WPW, WDH,
// WDW. The kernel also takes them as arguments, for a signature identical
// to depthwise_reference's; it reads the defines.
// Needs common/dtype.cl, common/epilogue.cl, common/vector.cl,
// common/image.cl and conv/direct_conv.cl (tiles, loads, the epilogue on
// vectors) before it.
//
// NDRange: (ceil(Q/TQ)*WGQ, ceil(P/TP)*WGP, N*ceil(C/CWG)*CWG) with
// work-group (WGQ, WGP, CWG). Work-item (tx, ty, tz) of work-group (x, y, z)
// computes channel c = c0 + tz of image n and, strided as in conv2d.cl,
//   rows     p = p0 + pi*WGP + ty          (pi < PWI)
//   columns  q = q0 + (j*WGQ + tx)*VW + v  (j < QWI/VW, v < VW),
// or with RT=1 a block of consecutive rows and columns
//   rows     p = p0 + ty*PWI + pi          (pi < PWI)
//   columns  q = q0 + tx*QWI + k           (k < QWI).
// Edge tiles: channels past C read the last channel, rows and columns past
// P and Q read zero padding; none of them is stored.

#define WGS (WGQ * WGP * CWG)

#ifndef RT
#define RT 0
#endif
#if RT
#if LI || IMI
#error "RT=1 reads the input buffer itself: it needs LI=0 and IMI=0"
#endif
// Input rows and columns one work-item reads per channel (RT=1).
#define RH ((PWI - 1) * WSH + (WR - 1) * WDH + 1)
#define RW ((QWI - 1) * WSW + (WS - 1) * WDW + 1)
// Pixels of a register row: RW, or up to the end of the QWI pixels under
// the work-item's columns where the left padding is wider than the window
// reaches (with SW=1 those are loaded whole).
#define RLEN (RW > WPW + QWI ? RW : WPW + QWI)

// VW pixels row[iw] .. row[iw+VW-1], row[iw] VW-aligned: one aligned vector
// load for fp32 storage (the vloadn of CLOAD_G asks for element alignment
// only, which some compilers split into single loads).
inline accv load_aligned(const __global real_t* restrict row, int iw) {
#if DTYPE_FP16 || VW == 1
  return CLOAD_G(row + iw);
#else
  return *(const __global accv*)(row + iw);
#endif
}

// Stores v to row[q] .. row[q+VW-1] (lanes at Q or past it dropped); an
// aligned vector store for fp32 storage when Q is a multiple of VW (q is
// one).
inline void store_aligned(__global real_t* row, int q, int Q, floatv v) {
#if !DTYPE_FP16 && VW > 1
  if (Q % VW == 0 && q + VW <= Q) {
    *(__global floatv*)(row + q) = v;
    return;
  }
#endif
  store_vector(row, q, Q, v);
}

// Lanes of an accv into x[0] .. x[VW-1].
#if VW == 1
#define SPREAD(x, v) ((x)[0] = (v))
#elif VW == 2
#define SPREAD(x, v) ((x)[0] = (v).s0, (x)[1] = (v).s1)
#else
#define SPREAD(x, v) \
  ((x)[0] = (v).s0, (x)[1] = (v).s1, (x)[2] = (v).s2, (x)[3] = (v).s3)
#endif

// Pixels iw0 .. iw0+RLEN-1 of image row ih of a plane `in` (H x W) into
// x[0] .. x[RLEN-1], zero outside the image. vector (SW=1, W a multiple
// of VW, the columns qf .. qf+QWI-1 inside the row): those columns as
// aligned vector loads, the rest one by one. A row outside the image is
// read at the nearest row and zeroed, so there is no branch on it.
inline void load_row(const __global real_t* restrict in, int ih, int H, int W,
                     int iw0, int qf, bool vector, acc_t* x) {
  const bool inside = ih >= 0 && ih < H;
  const __global real_t* row = in + (size_t)clamp(ih, 0, H - 1) * W;
  if (vector) {
#pragma unroll
    for (int e = 0; e < WPW; ++e) x[e] = load_pixel(row, iw0 + e, W);
#pragma unroll
    for (int j = 0; j < NVEC; ++j) {
      const accv v = load_aligned(row, qf + j * VW);
      SPREAD(x + WPW + j * VW, v);
    }
#pragma unroll
    for (int e = WPW + QWI; e < RLEN; ++e) x[e] = load_pixel(row, iw0 + e, W);
  } else {
#pragma unroll
    for (int e = 0; e < RLEN; ++e) x[e] = load_pixel(row, iw0 + e, W);
  }
#pragma unroll
  for (int e = 0; e < RLEN; ++e) x[e] = inside ? x[e] : (acc_t)0;
}

// The kernel's loop over the RH input rows of a work-item: row y feeds
// output row pi through filter row r where pi*SH + r*DH == y (all
// compile-time once unrolled).
#define ROW_LOOP(VECTOR)                                                 \
  _Pragma("unroll") for (int y = 0; y < RH; ++y) {                       \
    acc_t x[RLEN];                                                       \
    load_row(in, ih0 + y, H, W, iw0, qf, (VECTOR), x);                   \
    _Pragma("unroll") for (int pi = 0; pi < PWI; ++pi) {                 \
      _Pragma("unroll") for (int r = 0; r < WR; ++r) {                   \
        if (pi * WSH + r * WDH == y) {                                   \
          _Pragma("unroll") for (int s = 0; s < WS; ++s) {               \
            _Pragma("unroll") for (int k = 0; k < QWI; ++k) {            \
              acc[pi][k] =                                               \
                  mad(wv[r * WS + s], x[k * WSW + s * WDW], acc[pi][k]); \
            }                                                            \
          }                                                              \
        }                                                                \
      }                                                                  \
    }                                                                    \
  }
#endif  // RT

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, CWG))) void depthwise(
    const int N, const int C, const int H, const int W, const int R,
    const int S, const int SH, const int SW, const int PH, const int PW,
    const int DH, const int DW, const int P, const int Q, INPUT_TYPE input,
    const __global real_t* restrict weight, __global real_t* restrict output,
    const __global float* scale, const __global float* shift,
    const __global real_t* residual, const float act_a, const float act_b) {
#if LI
  __local acc_t tile[CWG * TH * TW];
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tz = get_local_id(2);
  const int ctiles = (C + CWG - 1) / CWG;
  const int gz = get_group_id(2);
  const int c0 = (gz % ctiles) * CWG;
  const int n = gz / ctiles;
  const int c = c0 + tz;
  const int cc = min(c, C - 1);  // clamped: loads stay inside the tensors
  const int p0 = get_group_id(1) * TP;
  const int q0 = get_group_id(0) * TQ;

#if RT
  const int plane = n * C + cc;
  const int pf = p0 + ty * PWI;  // the work-item's first row and column
  const int qf = q0 + tx * QWI;
  acc_t wv[RS];
#pragma unroll
  for (int rs = 0; rs < RS; ++rs) wv[rs] = LOADC(weight, cc * RS + rs);
  acc_t acc[PWI][QWI];
#pragma unroll
  for (int pi = 0; pi < PWI; ++pi)
#pragma unroll
    for (int k = 0; k < QWI; ++k) acc[pi][k] = (acc_t)0;
  const __global real_t* in = input + (size_t)plane * H * W;
  const int ih0 = pf * WSH - WPH;
  const int iw0 = qf * WSW - WPW;  // column of x[0]
  // The columns under the work-item's own as aligned vectors (SW=1: they
  // are x[WPW] .. x[WPW+QWI-1]); else, and at the right edge, one by one.
  const bool vector_row = WSW == 1 && W % VW == 0 && qf + QWI <= W;
  // Two copies of the row loop, each without a branch inside (the rows
  // above and below the image are clamped loads, then zeroed), so that the
  // compiler may put every row's loads in flight before the first FMA.
  if (vector_row) {
    ROW_LOOP(true);
  } else {
    ROW_LOOP(false);
  }

  if (c >= C) return;
#pragma unroll
  for (int pi = 0; pi < PWI; ++pi) {
    const int p = pf + pi;
    if (p >= P) continue;
    const size_t row = (((size_t)n * C + c) * P + p) * Q;
#pragma unroll
    for (int j = 0; j < NVEC; ++j) {
      const int q = qf + j * VW;
#define AT(v) acc[pi][j * VW + (v)]
      const accv a = CGATHER(AT);
#undef AT
      store_aligned(
          output + row, q, Q,
          epilogue_vector(TO_FLOATV(a), load_residual(residual + row, q, Q), c,
                          scale, shift, act_a, act_b));
    }
  }
#else  // RT == 0
#if LI
  // Not in a conditional and reached by every work-item of the group.
  stage_input(input, n * C, tile, CWG, C, H, W, c0, p0 * WSH - WPH,
              q0 * WSW - WPW, (tz * WGP + ty) * WGQ + tx, WGS);
  barrier(CLK_LOCAL_MEM_FENCE);
#else
  const int plane = n * C + cc;  // this work-item's input plane
#endif

  const __global real_t* taps = weight + (size_t)cc * RS;  // R x S

  accv acc[PWI][NVEC];
  for (int pi = 0; pi < PWI; ++pi)
    for (int j = 0; j < NVEC; ++j) acc[pi][j] = (accv)(0);

  for (int rs0 = 0; rs0 < RS; rs0 += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int rs = rs0 + u;
      if (RS % UNROLL == 0 || rs < RS) {
        const int r = rs / WS;
        const int s = rs - r * WS;
        const accv w = (accv)(LOADC(taps, rs));
        for (int pi = 0; pi < PWI; ++pi) {
#if LI
          const __local acc_t* trow =
              tile + (tz * TH + (pi * WGP + ty) * WSH + r * WDH) * TW + s * WDW;
#else
          const int ih = (p0 + pi * WGP + ty) * WSH - WPH + r * WDH;
#endif
          for (int j = 0; j < NVEC; ++j) {
            const int ql = (j * WGQ + tx) * VW;
#if LI
            const accv x = load_tile(trow + ql * WSW);
#else
            const accv x = load_input(input, plane, ih,
                                      (q0 + ql) * WSW - WPW + s * WDW, H, W);
#endif
            acc[pi][j] = mad(w, x, acc[pi][j]);
          }
        }
      }
    }
  }

  if (c >= C) return;
  for (int pi = 0; pi < PWI; ++pi) {
    const int p = p0 + pi * WGP + ty;
    if (p >= P) continue;
    const size_t row = (((size_t)n * C + c) * P + p) * Q;
    for (int j = 0; j < NVEC; ++j) {
      const int q = q0 + (j * WGQ + tx) * VW;
      store_vector(output + row, q, Q,
                   epilogue_vector(TO_FLOATV(acc[pi][j]),
                                   load_residual(residual + row, q, Q), c,
                                   scale, shift, act_a, act_b));
    }
  }
#endif  // RT
}
