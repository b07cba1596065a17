// What the direct convolution kernels (conv2d.cl, depthwise.cl) share: the
// output tile of a work-group and the input window it reads, the epilogue
// on vectors, and the loads of input pixels from the input tensor (zero
// padding) and from a local tile, in the arithmetic type acc_t (accv;
// common/dtype.cl, HALF). Needs common/dtype.cl, common/epilogue.cl,
// common/vector.cl and common/image.cl before it; reads the knobs PWI, QWI,
// WGP, WGQ, VW, IMI and the window defines WR, WS, WSH, WSW, WDH, WDW.
//
// The input (N x C x H x W) is read by plane, plane p = n*C + c (channel c
// of image n), either from a buffer (IMI 0) or (IMI 1) from a read-only
// image2d_t of RGBA texels (common/image.cl) whose row p*H + ih holds image
// row ih of plane p, four consecutive pixels along W per texel: a texel
// read brings four pixels of a row, which is what the output columns of a
// work-item and the rows of a local input tile read. Loads at any column
// (padding, stride, dilation) pick their pixels out of one or two texels.

#if VW != 1 && VW != 2 && VW != 4
#error "VW must be 1, 2 or 4"
#endif
#ifndef IMI
#define IMI 0
#endif
#if IMI
#if !IMAGE_READS
#error "IMI=1 needs common/image.cl with IMAGE_READS=1"
#endif
#define INPUT_TYPE __read_only image2d_t
#else
#define INPUT_TYPE const __global real_t* restrict
#endif

#define NVEC (QWI / VW)
#define TP (WGP * PWI)
#define TQ (WGQ * QWI)
#define RS (WR * WS)
// Input rows and columns one work-group reads per channel.
#define TH ((TP - 1) * WSH + (WR - 1) * WDH + 1)
#define TW ((TQ - 1) * WSW + (WS - 1) * WDW + 1)

// The residual's values row[q] .. row[q+VW-1] of a row of Q elements
// (common/epilogue.cl, RESIDUAL), as a floatv; lanes at Q or past it read
// the row's last element (they are never stored). Zero without RESIDUAL.
inline floatv load_residual(const __global real_t* row, int q, int Q) {
#if RESIDUAL
  if (q + VW <= Q) return VLOAD_G(row + q);
#define AT(v) LOADF(row, min(q + (v), Q - 1))
  return GATHER(AT);
#undef AT
#else
  return (floatv)(0.0f);
#endif
}

// The epilogue of common/epilogue.cl on every lane, for channel c, with
// the residual's lanes r.
inline floatv epilogue_vector(floatv x, floatv r, int c,
                              const __global float* scale,
                              const __global float* shift, float act_a,
                              float act_b) {
#define EPI(lane) \
  epilogue_residual(x.lane, r.lane, c, scale, shift, act_a, act_b)
#if VW == 1
  return epilogue_residual(x, r, c, scale, shift, act_a, act_b);
#elif VW == 2
  return (float2)(EPI(s0), EPI(s1));
#else
  return (float4)(EPI(s0), EPI(s1), EPI(s2), EPI(s3));
#endif
#undef EPI
}

#if IMI
// Texels per image row.
#define TEXELS_W(W) (((W) + 3) / 4)

// Pixel iw of image row y (W pixels); zero (padding) outside 0 .. W-1. The
// read itself is clamped, so it never leaves the row.
inline acc_t load_pixel(__read_only image2d_t in, int y, int iw, int W) {
  const int c = clamp(iw, 0, W - 1);
  const acc_t x = texel_lane(read_texel(in, c / 4, y), c % 4);
  return iw >= 0 && iw < W ? x : (acc_t)0;
}

// VW consecutive pixels iw0 .. iw0+VW-1 of image row y, all inside the
// row: out of texel iw0/4 and the next one.
inline accv load_texel_window(__read_only image2d_t in, int y, int iw0, int W) {
  const int x = iw0 / 4;
  const int o = iw0 % 4;
  const acc4 a = read_texel(in, x, y);
#if VW == 1
  return texel_lane(a, o);
#else
  // Past the row's last texel only when the window ends in texel x.
  const acc4 b = read_texel(in, min(x + 1, TEXELS_W(W) - 1), y);
#if VW == 2
  return o == 3 ? (accv)(a.s3, b.s0)
                : (o == 0 ? a.s01 : (o == 1 ? a.s12 : a.s23));
#else
  return o < 2 ? (o == 0 ? a : (accv)(a.s123, b.s0))
               : (o == 2 ? (accv)(a.s23, b.s01) : (accv)(a.s3, b.s012));
#endif
#endif
}
#else
// Pixel iw of an image row; zero (padding) outside 0 .. W-1. The load
// itself is clamped, so it never leaves the row.
inline acc_t load_pixel(const __global real_t* restrict row, int iw, int W) {
  const acc_t x = LOADC(row, clamp(iw, 0, W - 1));
  return iw >= 0 && iw < W ? x : (acc_t)0;
}
#endif

// Pixels (ih, iw0 + v*WSW), v < VW, of input plane `plane` (H x W); zero
// outside the image.
inline accv load_input(INPUT_TYPE in, int plane, int ih, int iw0, int H,
                       int W) {
  if (ih < 0 || ih >= H) return (accv)(0);
#if IMI
  const int y = plane * H + ih;
#if WSW == 1
  if (iw0 >= 0 && iw0 + VW <= W) return load_texel_window(in, y, iw0, W);
#endif
#define AT(v) load_pixel(in, y, iw0 + (v)*WSW, W)
#else
  const __global real_t* row = in + ((size_t)plane * H + ih) * W;
#if VW > 1 && WSW == 1
  if (iw0 >= 0 && iw0 + VW <= W) return CLOAD_G(row + iw0);
#endif
#define AT(v) load_pixel(row, iw0 + (v)*WSW, W)
#endif
  return CGATHER(AT);
#undef AT
}

// Values t[v*WSW], v < VW, of a local input tile row.
inline accv load_tile(const __local acc_t* t) {
#if VW == 1 || WSW == 1
  return VLOAD_L(t);
#else
#define AT(v) (t[(v)*WSW])
  return CGATHER(AT);
#undef AT
#endif
}

// Stages planes plane0 + c0 .. plane0 + c0+count-1 of `in` (planes
// plane0 .. plane0+C-1 are the channels in use, each H x W) into
// tile[z][y][x] (count x TH x TW), the pixels (ih0 + y, iw0 + x); zero
// outside the image and for channels past C. Work-item lid of the
// work-group's wgs copies every wgs-th element (with IMI, texel).
inline void stage_input(INPUT_TYPE in, int plane0, __local acc_t* tile,
                        int count, int C, int H, int W, int c0, int ih0,
                        int iw0, int lid, int wgs) {
#if IMI
  // A tile row of TW pixels from column iw0 spans at most TXW texels, from
  // texel t0 (floor(iw0 / 4); iw0 < 0 in the left padding).
#define TXW ((TW + 3) / 4 + 1)
  const int t0 = (iw0 >= 0 ? iw0 : iw0 - 3) / 4;
  for (int idx = lid; idx < count * TH * TXW; idx += wgs) {
    const int z = idx / (TH * TXW);
    const int rem = idx - z * (TH * TXW);
    const int y = rem / TXW;
    const int t = t0 + rem - y * TXW;
    const int ih = ih0 + y;
    const int c = min(c0 + z, C - 1);
    const acc4 v = read_texel(in, clamp(t, 0, TEXELS_W(W) - 1),
                              (plane0 + c) * H + clamp(ih, 0, H - 1));
    const bool row_inside = c0 + z < C && ih >= 0 && ih < H;
    __local acc_t* trow = tile + (z * TH + y) * TW;
    for (int lane = 0; lane < 4; ++lane) {
      const int iw = 4 * t + lane;
      const int col = iw - iw0;
      if (col >= 0 && col < TW) {
        trow[col] =
            row_inside && iw >= 0 && iw < W ? texel_lane(v, lane) : (acc_t)0;
      }
    }
  }
#undef TXW
#else
  for (int idx = lid; idx < count * TH * TW; idx += wgs) {
    const int z = idx / (TH * TW);
    const int rem = idx - z * (TH * TW);
    const int y = rem / TW;
    const int ih = ih0 + y;
    const int iw = iw0 + rem - y * TW;
    const int c = min(c0 + z, C - 1);
    const acc_t x =
        LOADC(in, ((size_t)(plane0 + c) * H + clamp(ih, 0, H - 1)) * W +
                      clamp(iw, 0, W - 1));
    const bool inside = c0 + z < C && ih >= 0 && ih < H && iw >= 0 && iw < W;
    tile[idx] = inside ? x : (acc_t)0;
  }
#endif
}
