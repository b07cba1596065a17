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
//   columns  q = q0 + (j*WGQ + tx)*VW + v  (j < QWI/VW, v < VW).
// Edge tiles: channels past C read the last channel, rows and columns past
// P and Q read zero padding; none of them is stored.

#define WGS (WGQ * WGP * CWG)

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
}
