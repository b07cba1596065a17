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

#define CHUNK (WG * VW * EPW)  // elements a work-group scales
#define RPB (WG / HSPLIT)       // hidden units per pass

// The share of the work-group calling it: image n (its first element at
// `base`), elements [start, end) of it, in channels c_first to c_first +
// c_count - 1 (c_count <= GMAX). Each image's C*H*W elements are processed
// flat, CHUNK consecutive elements a work-group.
typedef struct {
  int n, start, end, c_first, c_count;
  size_t base;
} gate_chunk;

inline gate_chunk gate_chunk_of(const int C, const int HW) {
  const int image = C * HW;  // elements of one image
  const int per_image = (image + CHUNK - 1) / CHUNK;
  gate_chunk k;
  k.n = get_group_id(0) / per_image;
  k.start = (get_group_id(0) % per_image) * CHUNK;
  k.end = min(k.start + CHUNK, image);
  k.c_first = k.start / HW;
  k.c_count = (k.end - 1) / HW - k.c_first + 1;
  k.base = (size_t)k.n * image;
  return k;
}

// The sum of `acc` over each run of `split` consecutive work-items (split a
// power of two dividing WG), through `part` (WG floats of local memory):
// strided sums before it, a tree here. Every work-item calls it (it holds
// barriers) and gets its run's sum.
inline float split_sum(__local float* part, const float acc, const int split) {
  const int t = get_local_id(0);
  const int p = t % split;
  part[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = split / 2; stride > 0; stride >>= 1) {
    if (p < stride) part[t] += part[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float sum = part[t - p];
  barrier(CLK_LOCAL_MEM_FENCE);  // part is written again by the next call
  return sum;
}

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
    if (HSPLIT > 1) acc = split_sum(part, acc, HSPLIT);
    if (p == 0 && r < R) h_l[r] = gate_act(ACT1, acc + b1[r], act1_a, act1_b);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

inline void gate_values(const int R, const gate_chunk chunk,
                        __local const float* h_l, __local float* g_l,
                        const __global real_t* restrict w2,
                        const __global float* restrict b2, const float act2_a,
                        const float act2_b) {
  for (int k = get_local_id(0); k < chunk.c_count; k += WG) {
    const int c = chunk.c_first + k;
    const __global real_t* row = w2 + (size_t)c * R;
    float acc = b2[c];
    for (int r = 0; r < R; ++r) acc = fma(LOADF(row, r), h_l[r], acc);
    g_l[k] = gate_act(ACT2, acc, act2_a, act2_b);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Scales the chunk's elements of x into the output (with RESIDUAL, adds
// the residual's).
inline void gate_scale(const int HW, const gate_chunk chunk,
                       __local const float* g_l,
                       const __global real_t* restrict x,
                       __global real_t* restrict output,
                       const __global real_t* restrict residual) {
  const int t = get_local_id(0);
  const int start = chunk.start, end = chunk.end, c_first = chunk.c_first;
  const __global real_t* xn = x + chunk.base;
  __global real_t* on = output + chunk.base;
#if RESIDUAL
  const __global real_t* rn = residual + chunk.base;
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
