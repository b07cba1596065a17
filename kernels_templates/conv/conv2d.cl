// Tunable direct 2D convolution, NCHW, with groups and a fused epilogue.
//   input  N x C x H x W, weight K x C/G x R x S (OIHW), output N x K x P x Q
//   with P = (H + 2*PH - DH*(R-1) - 1) / SH + 1 and Q likewise (W, S, SW, PW,
//   DW); zero padding. With Cg = C/G, Kg = K/G and g = k / Kg:
//     output[n][k][p][q] = epilogue(sum over c < Cg, r < R, s < S of
//         input[n][g*Cg + c][p*SH - PH + r*DH][q*SW - PW + s*DW] *
//         weight[k][c][r][s], channel k, residual[n][k][p][q])
//   (common/epilogue.cl; the residual, of the output's shape, is read only
//   with RESIDUAL=1)
//
// Knobs (build-time defines, see conv2d_direct.toml):
//   KWI, KWG   output channels per work-item / per work-group (KWI | KWG)
//   PWI, QWI   output rows / columns per work-item (register tile)
//   WGP, WGQ   work-items per work-group along P / along Q
//   VW         vector width along Q of accumulators, loads and stores
//   CB         input channels per step of the channel loop (local tiles)
//   LI         1: stage each step's input tile, halo included, in __local
//   LW         1: stage each step's weights (KWG x CB x R x S) in __local
//   UNROLL     unroll factor of the loop over the R*S window taps
//   HALF       1: products and accumulators in half (cl_khr_fp16, fp16
//              storage; common/dtype.cl), 0: in float
//   IMI        1: read the input through an image2d_t of texels of four
//              pixels along W (conv/direct_conv.cl), 0: from a buffer
// Window defines (the workload's, compiled in so that the tap loop unrolls
// and local tiles have static sizes): WR, WS, WSH, WSW, WPH, WPW, WDH, WDW.
// The kernel also takes them as arguments, for a signature identical to
// conv2d_reference's; it reads the defines.
// Needs common/dtype.cl, common/epilogue.cl, common/vector.cl,
// common/image.cl and conv/direct_conv.cl (tiles, loads, the epilogue on
// vectors) before it.
//
// NDRange: (ceil(Q/TQ)*WGQ, ceil(P/TP)*WGP, N*G*ceil(Kg/KWG)*KDIM) with
// work-group (WGQ, WGP, KDIM). Work-group (x, y, z) computes output channels
// k0 .. k0+KWG-1 of group g of image n, rows p0 .. p0+TP-1 and columns
// q0 .. q0+TQ-1. Its work-item (tx, ty, tz) owns, strided as in CLBlast's
// Xgemm (neighbouring work-items touch neighbouring memory):
//   channels k = k0 + i*KDIM + tz          (i < KWI)
//   rows     p = p0 + pi*WGP + ty          (pi < PWI)
//   columns  q = q0 + (j*WGQ + tx)*VW + v  (j < QWI/VW, v < VW).
// Edge tiles: channels past Kg read clamped weights, rows and columns past
// P and Q read zero padding; none of them is stored.

#define KDIM (KWG / KWI)
#define WGS (WGQ * WGP * KDIM)

// Stages the weights of channels k0 .. k0+KWG-1 (of Kg) and c0 .. c0+CB-1
// (of Cg) of group weights `w_g` into wt[kl][cb][rs] (KWG x CB x RS); zero
// past Kg or Cg.
inline void stage_weights(const __global real_t* restrict w_g,
                          __local acc_t* wt, int Kg, int Cg, int k0, int c0,
                          int lid) {
  for (int idx = lid; idx < KWG * CB * RS; idx += WGS) {
    const int kl = idx / (CB * RS);
    const int rem = idx - kl * (CB * RS);
    const int cb = rem / RS;
    const int rs = rem - cb * RS;
    const int k = min(k0 + kl, Kg - 1);
    const int c = min(c0 + cb, Cg - 1);
    const acc_t x = LOADC(w_g, ((size_t)k * Cg + c) * RS + rs);
    wt[idx] = k0 + kl < Kg && c0 + cb < Cg ? x : (acc_t)0;
  }
}

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, KDIM))) void conv2d(
    const int N, const int C, const int H, const int W, const int K,
    const int R, const int S, const int SH, const int SW, const int PH,
    const int PW, const int DH, const int DW, const int G, const int P,
    const int Q, INPUT_TYPE input, const __global real_t* restrict weight,
    __global real_t* restrict output, const __global float* scale,
    const __global float* shift, const __global real_t* residual,
    const float act_a, const float act_b) {
#if LI
  __local acc_t tile[CB * TH * TW];
#endif
#if LW
  __local acc_t wt[KWG * CB * RS];
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tz = get_local_id(2);
  const int lid = (tz * WGP + ty) * WGQ + tx;
  const int Cg = C / G;
  const int Kg = K / G;
  const int ktiles = (Kg + KWG - 1) / KWG;
  const int gz = get_group_id(2);
  const int k0 = (gz % ktiles) * KWG;  // first channel of the tile, in group
  const int g = (gz / ktiles) % G;
  const int n = gz / (ktiles * G);
  const int p0 = get_group_id(1) * TP;
  const int q0 = get_group_id(0) * TQ;
  const int plane0 = n * C + g * Cg;  // the group's first input plane
  const __global real_t* w_g = weight + (size_t)g * Kg * Cg * RS;

#if !LW
  int krow[KWI];  // this work-item's channels, clamped to Kg - 1
  for (int i = 0; i < KWI; ++i) krow[i] = min(k0 + i * KDIM + tz, Kg - 1);
#endif

  accv acc[KWI][PWI][NVEC];
  for (int i = 0; i < KWI; ++i)
    for (int pi = 0; pi < PWI; ++pi)
      for (int j = 0; j < NVEC; ++j) acc[i][pi][j] = (accv)(0);

  // The channel loop; its trip count is the same for the whole work-group
  // and its barriers sit at loop level, never inside a conditional.
  const int steps = (Cg + CB - 1) / CB;
  for (int t = 0; t < steps; ++t) {
    const int c0 = t * CB;
    const int ccount = min(CB, Cg - c0);
#if LI
    stage_input(input, plane0, tile, CB, Cg, H, W, c0, p0 * WSH - WPH,
                q0 * WSW - WPW, lid, WGS);
#endif
#if LW
    stage_weights(w_g, wt, Kg, Cg, k0, c0, lid);
#endif
#if LI || LW
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int cb = 0; cb < ccount; ++cb) {
#if !LI
      const int plane = plane0 + c0 + cb;
#endif
      for (int rs0 = 0; rs0 < RS; rs0 += UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const int rs = rs0 + u;
          if (RS % UNROLL == 0 || rs < RS) {
            const int r = rs / WS;
            const int s = rs - r * WS;
            acc_t wv[KWI];
            for (int i = 0; i < KWI; ++i) {
#if LW
              wv[i] = wt[((i * KDIM + tz) * CB + cb) * RS + rs];
#else
              wv[i] = LOADC(w_g, ((size_t)krow[i] * Cg + c0 + cb) * RS + rs);
#endif
            }
            for (int pi = 0; pi < PWI; ++pi) {
#if LI
              const __local acc_t* trow =
                  tile + (cb * TH + (pi * WGP + ty) * WSH + r * WDH) * TW +
                  s * WDW;
#else
              const int ih = (p0 + pi * WGP + ty) * WSH - WPH + r * WDH;
#endif
              for (int j = 0; j < NVEC; ++j) {
                const int ql = (j * WGQ + tx) * VW;
#if LI
                const accv x = load_tile(trow + ql * WSW);
#else
                const accv x = load_input(
                    input, plane, ih, (q0 + ql) * WSW - WPW + s * WDW, H, W);
#endif
                for (int i = 0; i < KWI; ++i) {
                  acc[i][pi][j] = mad((accv)(wv[i]), x, acc[i][pi][j]);
                }
              }
            }
          }
        }
      }
    }
#if LI || LW
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  for (int i = 0; i < KWI; ++i) {
    const int k = k0 + i * KDIM + tz;
    if (k >= Kg) continue;
    const int channel = g * Kg + k;
    for (int pi = 0; pi < PWI; ++pi) {
      const int p = p0 + pi * WGP + ty;
      if (p >= P) continue;
      const size_t row = (((size_t)n * K + channel) * P + p) * Q;
      for (int j = 0; j < NVEC; ++j) {
        const int q = q0 + (j * WGQ + tx) * VW;
        store_vector(output + row, q, Q,
                     epilogue_vector(TO_FLOATV(acc[i][pi][j]),
                                     load_residual(residual + row, q, Q),
                                     channel, scale, shift, act_a, act_b));
      }
    }
  }
}
