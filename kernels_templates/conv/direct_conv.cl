// What the direct convolution kernels (conv2d.cl, depthwise.cl) share: the
// output tile of a work-group and the input window it reads, the epilogue
// on vectors, and the loads of input pixels from global memory (zero
// padding) and from a local tile. Needs common/dtype.cl, common/epilogue.cl
// and common/vector.cl before it; reads the knobs PWI, QWI, WGP, WGQ, VW
// and the window defines WR, WS, WSH, WSW, WDH, WDW.

#if VW != 1 && VW != 2 && VW != 4
#error "VW must be 1, 2 or 4"
#endif

#define NVEC (QWI / VW)
#define TP (WGP * PWI)
#define TQ (WGQ * QWI)
#define RS (WR * WS)
// Input rows and columns one work-group reads per channel.
#define TH ((TP - 1) * WSH + (WR - 1) * WDH + 1)
#define TW ((TQ - 1) * WSW + (WS - 1) * WDW + 1)

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
  return GATHER(AT);
#undef AT
}

// Values t[v*WSW], v < VW, of a local input tile row.
inline floatv load_tile(const __local float* t) {
#if VW == 1 || WSW == 1
  return VLOAD_L(t);
#else
#define AT(v) (t[(v)*WSW])
  return GATHER(AT);
#undef AT
#endif
}

// Stages channels c0 .. c0+count-1 of `in` (C channels of H x W) into
// tile[z][y][x] (count x TH x TW), the pixels (ih0 + y, iw0 + x); zero
// outside the image and for channels past C. Work-item lid of the
// work-group's wgs copies every wgs-th element.
inline void stage_input(const __global real_t* restrict in,
                        __local float* tile, int count, int C, int H, int W,
                        int c0, int ih0, int iw0, int lid, int wgs) {
  for (int idx = lid; idx < count * TH * TW; idx += wgs) {
    const int z = idx / (TH * TW);
    const int rem = idx - z * (TH * TW);
    const int y = rem / TW;
    const int ih = ih0 + y;
    const int iw = iw0 + rem - y * TW;
    const int c = min(c0 + z, C - 1);
    const float x = LOADF(
        in, ((size_t)c * H + clamp(ih, 0, H - 1)) * W + clamp(iw, 0, W - 1));
    const bool inside = c0 + z < C && ih >= 0 && ih < H && iw >= 0 && iw < W;
    tile[idx] = inside ? x : 0.0f;
  }
}
