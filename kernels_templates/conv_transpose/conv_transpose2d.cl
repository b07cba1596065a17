// Tunable transposed 2D convolution (ONNX ConvTranspose), NCHW, with groups
// and a fused epilogue, as a gather: every output element sums the input
// taps that reach it, so no two work-items write the same element and no
// atomics are needed.
//   input  N x C x H x W, weight C x K/G x R x S, output N x K x OH x OW
//   with OH = (H-1)*SH - 2*PH + DH*(R-1) + OPH + 1 (OW likewise). With
//   Cg = C/G, Kg = K/G, g = k / Kg, kk = k - g*Kg:
//     output[n][k][oh][ow] = epilogue(sum over c < Cg, r < R, s < S with
//         oh + PH - r*DH = ih*SH, ow + PW - s*DW = iw*SW, 0 <= ih < H,
//         0 <= iw < W of input[n][g*Cg + c][ih][iw] *
//         weight[g*Cg + c][kk][r][s], channel k)
//
// Phases (the sub-pixel decomposition of a strided transposed convolution,
// e.g. Shi et al., CVPR 2016): output rows oh = a + SH*u of row phase
// a < SH take exactly the taps r with (a + PH - r*DH) % SH == 0, from input
// row ih = u + (a + PH - r*DH) / SH; columns likewise with phase b < SW.
// Within a phase the transposed convolution is a stride-1 correlation, so
// a work-item's rows and columns read runs of consecutive input pixels.
// For the common stride == kernel case (R = SH, S = SW, no padding or
// dilation) each phase has a single tap: a 1x1 convolution per phase.
//
// Knobs (build-time defines, see conv_transpose2d_direct.toml):
//   KWI, KWG   output channels per work-item / per work-group (KWI | KWG)
//   PWI, QWI   phase rows u / phase columns v per work-item (register
//              tile); a work-item computes every column phase b < SW of
//              its columns, so it writes QWI*SW consecutive outputs of a row
//   WGP, WGQ   work-items per work-group along u / along v
//   VW         vector width along v of accumulators and input loads
//   AP         1: a work-item also computes every row phase a < SH of its
//              rows (its input runs are read once for all SH*SW phases,
//              which is what stride == kernel wants), 0: the row phase is
//              the work-group's (NDRange dimension 2)
// Window defines (the workload's, compiled in so that the tap loops unroll
// and the column phases' taps fold to constants): WR, WS, WSH, WSW, WPH,
// WPW, WDH, WDW. The kernel also takes them as arguments, for a signature
// identical to conv_transpose2d_reference's; it reads the defines.
// Needs common/dtype.cl, common/epilogue.cl and common/vector.cl before it.
//
// NDRange: (ceil(ceil(OW/SW)/TQ)*WGQ, ceil(ceil(OH/SH)/TP)*WGP,
// N*G*(AP ? 1 : SH)*ceil(Kg/KWG)*KDIM) with work-group (WGQ, WGP, KDIM).
// Work-group (x, y, z) computes row phase a (every one with AP) of channels k0
// .. k0+KWG-1 of group g of image n, phase rows u0 .. u0+TP-1 and phase columns
// v0 .. v0+TQ-1. Its work-item (tx, ty, tz) owns, strided as in CLBlast's
// Xgemm:
//   channels k = k0 + i*KDIM + tz          (i < KWI)
//   rows     u = u0 + pi*WGP + ty          (pi < PWI)
//   columns  v = v0 + (j*WGQ + tx)*VW + l  (j < QWI/VW, l < VW)
// and outputs (a + SH*u, b + SW*v) for every b < SW (and a < SH with AP).
// Channels past Kg read clamped weights, rows and columns past the output are
// not stored.

#if VW != 1 && VW != 2 && VW != 4
#error "VW must be 1, 2 or 4"
#endif

#define KDIM (KWG / KWI)
#define NVEC (QWI / VW)
#define TP (WGP * PWI)
#define TQ (WGQ * QWI)
#define RS (WR * WS)
#ifndef AP
#define AP 0
#endif
// Row phases per work-item.
#if AP
#define NPH WSH
#else
#define NPH 1
#endif

// Pixel iw of an input row of W pixels; zero outside 0 .. W-1 (the load
// itself is clamped, so it never leaves the row).
inline float ct_pixel(const __global real_t* restrict row, int iw, int W) {
  const float x = LOADF(row, clamp(iw, 0, W - 1));
  return iw >= 0 && iw < W ? x : 0.0f;
}

// Pixels iw0 .. iw0+VW-1 of an input row of W pixels; zero outside.
inline floatv ct_run(const __global real_t* restrict row, int iw0, int W) {
#if VW > 1
  if (iw0 >= 0 && iw0 + VW <= W) return VLOAD_G(row + iw0);
#endif
#define AT(l) ct_pixel(row, iw0 + (l), W)
  return GATHER(AT);
#undef AT
}

__kernel __attribute__((reqd_work_group_size(WGQ, WGP, KDIM))) void
conv_transpose2d(const int N, const int C, const int H, const int W,
                 const int K, const int R, const int S, const int SH,
                 const int SW, const int PH, const int PW, const int DH,
                 const int DW, const int OPH, const int OPW, const int G,
                 const int OH, const int OW,
                 const __global real_t* restrict input,
                 const __global real_t* restrict weight,
                 __global real_t* restrict output, const __global float* scale,
                 const __global float* shift, const float act_a,
                 const float act_b) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tz = get_local_id(2);
  const int Cg = C / G;
  const int Kg = K / G;
  const int ktiles = (Kg + KWG - 1) / KWG;
  int gz = get_group_id(2);
  const int k0 = (gz % ktiles) * KWG;  // first channel of the tile, in group
  gz /= ktiles;
#if AP
  const int a0 = 0;  // every row phase, a = ap
#else
  const int a0 = gz % WSH;  // the work-group's row phase
  gz /= WSH;
#endif
  const int g = gz % G;
  const int n = gz / G;
  const int u0 = get_group_id(1) * TP;
  const int v0 = get_group_id(0) * TQ;

  int krow[KWI];  // this work-item's channels, clamped to Kg - 1
  for (int i = 0; i < KWI; ++i) krow[i] = min(k0 + i * KDIM + tz, Kg - 1);

  floatv acc[KWI][PWI][NVEC][NPH][WSW];
  for (int i = 0; i < KWI; ++i)
    for (int pi = 0; pi < PWI; ++pi)
      for (int j = 0; j < NVEC; ++j)
        for (int ap = 0; ap < NPH; ++ap)
          for (int b = 0; b < WSW; ++b) acc[i][pi][j][ap][b] = (floatv)(0.0f);

  for (int c = 0; c < Cg; ++c) {
    const int cin = g * Cg + c;  // input channel, also the weight's first axis
    const __global real_t* plane = input + ((size_t)n * C + cin) * H * W;
    const __global real_t* wc = weight + (size_t)cin * Kg * RS;
#pragma unroll
    for (int ap = 0; ap < NPH; ++ap) {
#pragma unroll
      for (int r = 0; r < WR; ++r) {
        // Tap r reaches row phase a when (a + PH - r*DH) % SH == 0: a
        // constant once unrolled with AP, else the same for the work-group.
        const int tr = a0 + ap + WPH - r * WDH;
        if (tr % WSH != 0) continue;
        const int off_r = tr / WSH;
        // Column phase b takes the taps s with (b + PW - s*DW) % SW == 0,
        // from input column v + (b + PW - s*DW) / SW.
#pragma unroll
        for (int b = 0; b < WSW; ++b) {
#pragma unroll
          for (int s = 0; s < WS; ++s) {
            const int ts = b + WPW - s * WDW;
            if (ts % WSW != 0) continue;  // constant once unrolled
            const int off_s = ts / WSW;
            float wv[KWI];
            for (int i = 0; i < KWI; ++i) {
              wv[i] = LOADF(wc, (size_t)krow[i] * RS + r * WS + s);
            }
            for (int pi = 0; pi < PWI; ++pi) {
              const int ih = u0 + pi * WGP + ty + off_r;
              const bool row_inside = ih >= 0 && ih < H;
              const __global real_t* row =
                  plane + (size_t)clamp(ih, 0, H - 1) * W;
              for (int j = 0; j < NVEC; ++j) {
                const int iw0 = v0 + (j * WGQ + tx) * VW + off_s;
                const floatv x =
                    row_inside ? ct_run(row, iw0, W) : (floatv)(0.0f);
                for (int i = 0; i < KWI; ++i) {
                  acc[i][pi][j][ap][b] =
                      mad((floatv)(wv[i]), x, acc[i][pi][j][ap][b]);
                }
              }
            }
          }
        }
      }
    }
  }

  for (int i = 0; i < KWI; ++i) {
    const int k = k0 + i * KDIM + tz;
    if (k >= Kg) continue;
    const int channel = g * Kg + k;
    for (int pi = 0; pi < PWI; ++pi) {
      for (int ap = 0; ap < NPH; ++ap) {
        const int oh = a0 + ap + WSH * (u0 + pi * WGP + ty);
        if (oh >= OH) continue;
        __global real_t* orow =
            output + (((size_t)n * K + channel) * OH + oh) * OW;
        for (int j = 0; j < NVEC; ++j) {
          const int v = v0 + (j * WGQ + tx) * VW;
          for (int l = 0; l < VW; ++l) {
            for (int b = 0; b < WSW; ++b) {
              const int ow = (v + l) * WSW + b;
              if (ow < OW) {
                STOREF(epilogue(element(acc[i][pi][j][ap][b], l), channel,
                                scale, shift, act_a, act_b),
                       orow, ow);
              }
            }
          }
        }
      }
    }
  }
}
