// Tunable depthwise 2D convolution (channel multiplier 1), NCHW, with a
// fused epilogue.
//   input  N x C x H x W, weight C x 1 x R x S, output N x C x P x Q with
//   P = (H + 2*PH - DH*(R-1) - 1) / SH + 1 and Q likewise (W, S, SW, PW,
//   DW); zero padding:
//     output[n][c][p][q] = epilogue(sum over r < R, s < S of
//         input[n][c][p*SH - PH + r*DH][q*SW - PW + s*DW] * weight[c][r][s],
//         channel c)
//
// Knobs (build-time defines, see depthwise_template.cc):
//   PWI, QWI   output rows / columns per work-item (register tile)
//   WGP, WGQ   work-items per work-group along P / along Q
//   CWG        channels per work-group (one per work-item along dim 2)
//   VW         vector width along Q of accumulators, loads and stores
//   LI         1: stage the work-group's input tile, halo included, in
//              __local
//   UNROLL     unroll factor of the loop over the R*S window taps
// Window defines (the workload's, compiled in so that the tap loop unrolls
// and the local tile has a static size): WR, WS, WSH, WSW, WPH, WPW, WDH,
// WDW. The kernel also takes them as arguments, for a signature identical
// to depthwise_reference's; it reads the defines.
// Needs common/dtype.cl and common/epilogue.cl before it.
//
// NDRange: (ceil(Q/TQ)*WGQ, ceil(P/TP)*WGP, N*ceil(C/CWG)*CWG) with
// work-group (WGQ, WGP, CWG). Work-item (tx, ty, tz) of work-group (x, y, z)
// computes channel c = c0 + tz of image n and, strided as in conv2d.cl,
//   rows     p = p0 + pi*WGP + ty          (pi < PWI)
//   columns  q = q0 + (j*WGQ + tx)*VW + v  (j < QWI/VW, v < VW).
// Edge tiles: channels past C read the last channel, rows and columns past
// P and Q read zero padding; none of them is stored.

#define WGS (WGQ * WGP * CWG)
#define NVEC (QWI / VW)
#define TP (WGP * PWI)
#define TQ (WGQ * QWI)
#define RS (WR * WS)
// Input rows and columns one work-group reads per channel.
#define TH ((TP - 1) * WSH + (WR - 1) * WDH + 1)
#define TW ((TQ - 1) * WSW + (WS - 1) * WDW + 1)

#define TF_CAT(a, b) TF_CAT_(a, b)
#define TF_CAT_(a, b) a##b

#if VW == 1
typedef float floatv;
#elif VW == 2
typedef float2 floatv;
#elif VW == 4
typedef float4 floatv;
#else
#error "VW must be 1, 2 or 4"
#endif
#if VW == 1
#define VSTORE_G(v, p) STOREF((v), (p), 0)
#elif DTYPE_FP16
#define VLOAD_G(p) TF_CAT(vload_half, VW)(0, (p))
#define VSTORE_G(v, p) TF_CAT(vstore_half, VW)((v), 0, (p))
#else
#define VLOAD_G(p) TF_CAT(vload, VW)(0, (p))
#define VSTORE_G(v, p) TF_CAT(vstore, VW)((v), 0, (p))
#endif

// Lane i of a vector, without taking its address.
inline float element(floatv v, int i) {
#if VW == 1
  return v;
#elif VW == 2
  return i == 0 ? v.s0 : v.s1;
#else
  return i < 2 ? (i == 0 ? v.s0 : v.s1) : (i == 2 ? v.s2 : v.s3);
#endif
}

// The epilogue of common/epilogue.cl on every lane, for channel c.
inline floatv epilogue_vector(floatv x, int c, const __global float* scale,
                              const __global float* shift, float act_a,
                              float act_b) {
#define EPI(lane) epilogue((lane), c, scale, shift, act_a, act_b)
#if VW == 1
  return EPI(x);
#elif VW == 2
  return (float2)(EPI(x.s0), EPI(x.s1));
#else
  return (float4)(EPI(x.s0), EPI(x.s1), EPI(x.s2), EPI(x.s3));
#endif
#undef EPI
}

// Pixel iw of an image row; zero (padding) outside 0 .. W-1. The load itself
// is clamped, so it never leaves the row.
inline float load_pixel(const __global real_t* restrict row, int iw, int W) {
  const float x = LOADF(row, clamp(iw, 0, W - 1));
  return iw >= 0 && iw < W ? x : 0.0f;
}

// Pixels (ih, iw0 + v*WSW), v < VW, of one channel plane (H x W); zero
// outside the image.
inline floatv load_input(const __global real_t* restrict plane, int ih, int iw0,
                         int H, int W) {
  if (ih < 0 || ih >= H) return (floatv)(0.0f);
  const __global real_t* row = plane + (size_t)ih * W;
#if VW > 1 && WSW == 1
  if (iw0 >= 0 && iw0 + VW <= W) return VLOAD_G(row + iw0);
#endif
#define AT(v) load_pixel(row, iw0 + (v)*WSW, W)
#if VW == 1
  return AT(0);
#elif VW == 2
  return (float2)(AT(0), AT(1));
#else
  return (float4)(AT(0), AT(1), AT(2), AT(3));
#endif
#undef AT
}

// Values t[v*WSW], v < VW, of a local input tile row.
inline floatv load_tile(const __local float* t) {
#if VW == 1
  return t[0];
#elif WSW == 1
  return TF_CAT(vload, VW)(0, t);
#elif VW == 2
  return (float2)(t[0], t[WSW]);
#else
  return (float4)(t[0], t[WSW], t[2 * WSW], t[3 * WSW]);
#endif
}

// Stages channels c0 .. c0+CWG-1 of image `in_n` (C channels of H x W) into
// tile[z][y][x] (CWG x TH x TW), the pixels (ih0 + y, iw0 + x); zero outside
// the image and for channels past C.
inline void stage_input(const __global real_t* restrict in_n,
                        __local float* tile, int C, int H, int W, int c0,
                        int ih0, int iw0, int lid) {
  for (int idx = lid; idx < CWG * TH * TW; idx += WGS) {
    const int z = idx / (TH * TW);
    const int rem = idx - z * (TH * TW);
    const int y = rem / TW;
    const int ih = ih0 + y;
    const int iw = iw0 + rem - y * TW;
    const int c = min(c0 + z, C - 1);
    const float x = LOADF(
        in_n, ((size_t)c * H + clamp(ih, 0, H - 1)) * W + clamp(iw, 0, W - 1));
    const bool inside = c0 + z < C && ih >= 0 && ih < H && iw >= 0 && iw < W;
    tile[idx] = inside ? x : 0.0f;
  }
}

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, CWG))) void depthwise(
    const int N, const int C, const int H, const int W, const int R,
    const int S, const int SH, const int SW, const int PH, const int PW,
    const int DH, const int DW, const int P, const int Q,
    const __global real_t* restrict input,
    const __global real_t* restrict weight, __global real_t* restrict output,
    const __global float* scale, const __global float* shift, const float act_a,
    const float act_b) {
#if LI
  __local float tile[CWG * TH * TW];
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
  const __global real_t* in_n = input + (size_t)n * C * H * W;

#if LI
  // Not in a conditional and reached by every work-item of the group.
  stage_input(in_n, tile, C, H, W, c0, p0 * WSH - WPH, q0 * WSW - WPW,
              (tz * WGP + ty) * WGQ + tx);
  barrier(CLK_LOCAL_MEM_FENCE);
#else
  const __global real_t* plane = in_n + (size_t)cc * H * W;
#endif

  const __global real_t* taps = weight + (size_t)cc * RS;  // R x S

  floatv acc[PWI][NVEC];
  for (int pi = 0; pi < PWI; ++pi)
    for (int j = 0; j < NVEC; ++j) acc[pi][j] = (floatv)(0.0f);

  for (int rs0 = 0; rs0 < RS; rs0 += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int rs = rs0 + u;
      if (RS % UNROLL == 0 || rs < RS) {
        const int r = rs / WS;
        const int s = rs - r * WS;
        const floatv w = (floatv)(LOADF(taps, rs));
        for (int pi = 0; pi < PWI; ++pi) {
#if LI
          const __local float* trow =
              tile + (tz * TH + (pi * WGP + ty) * WSH + r * WDH) * TW + s * WDW;
#else
          const int ih = (p0 + pi * WGP + ty) * WSH - WPH + r * WDH;
#endif
          for (int j = 0; j < NVEC; ++j) {
            const int ql = (j * WGQ + tx) * VW;
#if LI
            const floatv x = load_tile(trow + ql * WSW);
#else
            const floatv x =
                load_input(plane, ih, (q0 + ql) * WSW - WPW + s * WDW, H, W);
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
    __global real_t* orow = output + (((size_t)n * C + c) * P + p) * Q;
    for (int j = 0; j < NVEC; ++j) {
      const int q = q0 + (j * WGQ + tx) * VW;
      const floatv y =
          epilogue_vector(acc[pi][j], c, scale, shift, act_a, act_b);
      if (q + VW <= Q) {
        VSTORE_G(y, orow + q);
      } else {
        for (int v = 0; v < VW; ++v) {
          if (q + v < Q) STOREF(element(y, v), orow, q + v);
        }
      }
    }
  }
}
