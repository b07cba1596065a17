// Tunable elementwise op over an N x C x H x W tensor, flattened:
//   output[i] = epilogue(fn(A[i], B[j]), c)
// with c = (i / (H*W)) % C the element's channel and j B's element: i
// (B a tensor of A's shape), 0 (a scalar), c (one per channel) or
// i / (H*W) = n*C + c (one per image and channel). The epilogue is
// common/epilogue.cl's (AFFINE, ACT, POST with EPI_C = C). Any sizes.
//
// Knobs (build-time defines, see eltwise_direct.toml):
//   WG   work-items per work-group (1-D)
//   VW   vector width of loads and stores
//   EPW  vectors per work-item: a work-group covers CHUNK = WG*VW*EPW
//        consecutive elements, work-item t vectors (e*WG + t)*VW (e < EPW),
//        so a work-group's loads of one step are contiguous (coalesced)
// Op and shape-class defines (from the workload):
//   FN      0 none (A alone), 1 add, 2 sub, 3 mul, 4 div, 5 max, 6 min,
//           15 pow (A ** B); of A alone (B unread): 7 sqrt, 8 exp, 9 log,
//           10 abs, 11 neg, 12 reciprocal, 13 tanh, 14 erf, 16 floor,
//           17 ceil, 18 round (half to even, as ONNX Round), 19 sign
//   BMODE   0 tensor, 1 scalar, 2 channel, 3 nc
//   UNIFORM_PLANE 1 when VW divides H*W: the lanes of a whole vector lie in
//           one plane (one channel), whose index is computed once
// Entry point: eltwise(total, C, HW, a, b, output, scale, shift, act_a,
// act_b), total = N*C*H*W, HW = H*W.
// Needs common/dtype.cl, common/epilogue.cl and common/vector.cl before it.

#define CHUNK (WG * VW * EPW)
// The epilogue needs the channel; B needs the plane (channel, nc).
#define NEED_PLANE \
  (AFFINE != 0 || POST != 0 || (!UNARY && (BMODE == 2 || BMODE == 3)))

// 1 for the fns of A alone.
#define UNARY (FN == 0 || (FN >= 7 && FN != 15))

#if FN == 0
#define APPLY_FN(x, y) (x)
#elif FN == 7
#define APPLY_FN(x, y) sqrt(x)
#elif FN == 8
#define APPLY_FN(x, y) exp(x)
#elif FN == 9
#define APPLY_FN(x, y) log(x)
#elif FN == 10
#define APPLY_FN(x, y) fabs(x)
#elif FN == 11
#define APPLY_FN(x, y) (-(x))
#elif FN == 12
#define APPLY_FN(x, y) (1.0f / (x))
#elif FN == 13
#define APPLY_FN(x, y) tanh(x)
#elif FN == 14
#define APPLY_FN(x, y) erf(x)
#elif FN == 15
#define APPLY_FN(x, y) pow((x), (y))
#elif FN == 16
#define APPLY_FN(x, y) floor(x)
#elif FN == 17
#define APPLY_FN(x, y) ceil(x)
#elif FN == 18
#define APPLY_FN(x, y) rint(x)
#elif FN == 19
#define APPLY_FN(x, y) sign(x)
#elif FN == 1
#define APPLY_FN(x, y) ((x) + (y))
#elif FN == 2
#define APPLY_FN(x, y) ((x) - (y))
#elif FN == 3
#define APPLY_FN(x, y) ((x) * (y))
#elif FN == 4
#define APPLY_FN(x, y) ((x) / (y))
#elif FN == 5
#define APPLY_FN(x, y) fmax((x), (y))
#else
#define APPLY_FN(x, y) fmin((x), (y))
#endif

// VW elements of p from i on; lanes past `total` read element total-1.
inline floatv load_lanes(const __global real_t* p, int i, int total) {
  if (i + VW <= total) return VLOAD_G(p + i);
#define AT(l) LOADF(p, min(i + (l), total - 1))
  return GATHER(AT);
#undef AT
}

// Handles the vector of elements i .. i+VW-1 (i < total).
inline void eltwise_vector(const int i, const int total, const int C,
                           const int HW, const __global real_t* a,
                           const __global real_t* b, __global real_t* output,
                           const __global float* scale,
                           const __global float* shift,
                           const __global real_t* residual, const float act_a,
                           const float act_b) {
  const floatv x = load_lanes(a, i, total);
#if NEED_PLANE
#if UNIFORM_PLANE
  // Lanes past `total` (tail) share the plane too: they are not stored.
  const int plane = i / HW;
#define PLANE(l) plane
#else
#define PLANE(l) (min(i + (l), total - 1) / HW)
#endif
#define CHAN(l) (PLANE(l) % C)
#else
#define CHAN(l) 0
#endif

#if UNARY
  const floatv y = APPLY_FN(x, x);
#else
#if BMODE == 0
  const floatv bv = load_lanes(b, i, total);
#elif BMODE == 1
  const floatv bv = (floatv)(LOADF(b, 0));
#elif UNIFORM_PLANE
  const floatv bv = (floatv)(LOADF(b, BMODE == 2 ? plane % C : plane));
#else
#define B_AT(l) LOADF(b, BMODE == 2 ? CHAN(l) : PLANE(l))
  const floatv bv = GATHER(B_AT);
#undef B_AT
#endif
  const floatv y = APPLY_FN(x, bv);
#endif

#if RESIDUAL
  // residual=add: R's element at the output element's index.
  const floatv rv = load_lanes(residual, i, total);
#define RES(l) element(rv, (l))
#else
#define RES(l) 0.0f
#endif
#if AFFINE == 0 && ACT == 0 && POST == 0 && RESIDUAL == 0
  const floatv out = y;
#else
#define EPI(l)                                                            \
  epilogue_residual(element(y, (l)), RES(l), CHAN(l), scale, shift, act_a, \
                    act_b)
  const floatv out = GATHER(EPI);
#undef EPI
#endif
#undef RES
  store_vector(output, i, total, out);
#undef CHAN
#ifdef PLANE
#undef PLANE
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void eltwise(
    const int total, const int C, const int HW,
    const __global real_t* restrict a, const __global real_t* restrict b,
    __global real_t* restrict output, const __global float* restrict scale,
    const __global float* restrict shift,
    const __global real_t* restrict residual, const float act_a,
    const float act_b) {
  const int first = get_group_id(0) * CHUNK + get_local_id(0) * VW;
  for (int e = 0; e < EPW; ++e) {
    const int i = first + e * (WG * VW);
    if (i >= total) return;
    eltwise_vector(i, total, C, HW, a, b, output, scale, shift, residual,
                   act_a, act_b);
  }
}
