// The work-group steps channel_gate.cl and se_block.cl share, for one
// image n of x (N x C x H x W, HW = H*W) with its pooled s in local
// memory (C floats):
//   gate_hidden  h[r] = act1(sum_c w1[r, c] * s[c] + b1[r]), r < R
//   gate_values  g[k] = act2(sum_r w2[c, r] * h[r] + b2[c]), c = c_first + k
//   gate_scale   output = x * g per channel (+ residual), elements
//                [start, end) of the image
// w1 R x C and w2 C x R as ONNX's 1x1 Conv weights store them. Every
// work-item of the group calls each function (they hold barriers).
// Defines used: WG, VW, EPW, HSPLIT (channel_gate.cl explains them),
// ACT1, ACT2, RESIDUAL, UNIFORM_PLANE. Needs common/dtype.cl,
// common/vector.cl and gate/gate_act.cl before it.

#define RPB (WG / HSPLIT)  // hidden units per pass

// `part`: WG floats of local memory when HSPLIT > 1 (else unread).
inline void gate_hidden(const int C, const int R, __local const float* s_l,
                        __local float* h_l, __local float* part,
                        const __global real_t* restrict w1,
                        const __global float* restrict b1, const float act1_a,
                        const float act1_b) {
  const int t = get_local_id(0);
  // Every work-item reaches every barrier (the pass count is the same for
  // all).
  for (int r0 = 0; r0 < R; r0 += RPB) {
    const int r = r0 + t / HSPLIT;
    const int p = t % HSPLIT;
    float acc = 0.0f;
    if (r < R) {
      const __global real_t* row = w1 + (size_t)r * C;
      for (int k = p; k < C; k += HSPLIT) acc = fma(LOADF(row, k), s_l[k], acc);
    }
#if HSPLIT > 1
    part[t] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = HSPLIT / 2; stride > 0; stride >>= 1) {
      if (p < stride) part[t] += part[t + stride];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (p == 0 && r < R) h_l[r] = gate_act(ACT1, part[t] + b1[r], act1_a, act1_b);
    barrier(CLK_LOCAL_MEM_FENCE);  // part is written again by the next pass
#else
    if (r < R) h_l[r] = gate_act(ACT1, acc + b1[r], act1_a, act1_b);
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

inline void gate_values(const int R, const int c_first, const int c_count,
                        __local const float* h_l, __local float* g_l,
                        const __global real_t* restrict w2,
                        const __global float* restrict b2, const float act2_a,
                        const float act2_b) {
  for (int k = get_local_id(0); k < c_count; k += WG) {
    const int c = c_first + k;
    const __global real_t* row = w2 + (size_t)c * R;
    float acc = b2[c];
    for (int r = 0; r < R; ++r) acc = fma(LOADF(row, r), h_l[r], acc);
    g_l[k] = gate_act(ACT2, acc, act2_a, act2_b);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// `base`: the first element of image n in x, the output and the residual
// (unread without RESIDUAL).
inline void gate_scale(const int HW, const size_t base, const int start,
                       const int end, const int c_first,
                       __local const float* g_l,
                       const __global real_t* restrict x,
                       __global real_t* restrict output,
                       const __global real_t* restrict residual) {
  const int t = get_local_id(0);
  const __global real_t* xn = x + base;
  __global real_t* on = output + base;
#if RESIDUAL
  const __global real_t* rn = residual + base;
#endif
  for (int e = 0; e < EPW; ++e) {
    const int i = start + (e * WG + t) * VW;
    if (i >= end) break;  // no barrier follows
    if (i + VW <= end) {
      const floatv v = VLOAD_G(xn + i);
#if UNIFORM_PLANE
      floatv y = v * g_l[i / HW - c_first];
#else
#define GATE_AT(l) g_l[(i + (l)) / HW - c_first]
      floatv y = v * GATHER(GATE_AT);
#undef GATE_AT
#endif
#if RESIDUAL
      y += VLOAD_G(rn + i);
#endif
      VSTORE_G(y, on + i);
    } else {
      for (int j = i; j < end; ++j) {
        float y = LOADF(xn, j) * g_l[j / HW - c_first];
#if RESIDUAL
        y += LOADF(rn, j);
#endif
        STOREF(y, on, j);
      }
    }
  }
}
