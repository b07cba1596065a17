// Tunable squeeze-and-excitation block over NCHW in one launch: for x
// (N x C x H x W):
//   s[n, c] = mean of x[n, c, :, :]                        (the squeeze)
//   h[n, r] = act1(sum_c w1[r, c] * s[n, c] + b1[r])      (r < R)
//   g[n, c] = act2(sum_r w2[c, r] * h[n, r] + b2[c])
//   output[n, c, :, :] = x[n, c, :, :] * g[n, c] (+ residual[n, c, :, :])
// It is channel_gate.cl with the global pool that feeds it folded in:
// every work-group pools its whole image into local memory itself (C*H*W
// loads a group, from cache after the first) instead of reading s from a
// global_pool launch before it. The import uses it for images small
// enough that the repeated pooling costs less than a launch (issue 36;
// docs/OPS.md, se_block).
//
// Knobs (build-time defines, see se_block_direct.toml): WG, VW, EPW and
// HSPLIT as channel_gate.cl has them, and
//   PSPLIT  work-items summing one channel's H*W values (strided, then a
//           tree in local memory; 1: one work-item a channel)
// Shape defines: CH = C, RH = R, GMAX, UNIFORM_PLANE as channel_gate.cl.
// Entry point: se_block(N, C, HW, R, x, output, w1, b1, w2, b2, residual,
// act1_a, act1_b, act2_a, act2_b), HW = H*W.
// Needs common/dtype.cl, common/vector.cl, gate/gate_act.cl and
// gate/gate_fc.cl before it.

#define CPB (WG / PSPLIT)  // channels pooled per pass

// s_l[c] = the mean of image n's channel c (`xn` its first element), for
// every c < C. `part`: WG floats of local memory when PSPLIT > 1.
inline void se_squeeze(const int C, const int HW,
                       const __global real_t* restrict xn, __local float* s_l,
                       __local float* part) {
  const int t = get_local_id(0);
  const float inv = 1.0f / (float)HW;
  // Every work-item reaches every barrier (the pass count is the same for
  // all).
  for (int c0 = 0; c0 < C; c0 += CPB) {
    const int c = c0 + t / PSPLIT;
    const int p = t % PSPLIT;
    float acc = 0.0f;
    if (c < C) {
      const __global real_t* plane = xn + (size_t)c * HW;
      for (int i = p; i < HW; i += PSPLIT) acc += LOADF(plane, i);
    }
    if (PSPLIT > 1) acc = split_sum(part, acc, PSPLIT);
    if (p == 0 && c < C) s_l[c] = acc * inv;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void se_block(
    const int N, const int C, const int HW, const int R,
    const __global real_t* restrict x, __global real_t* restrict output,
    const __global real_t* restrict w1, const __global float* restrict b1,
    const __global real_t* restrict w2, const __global float* restrict b2,
    const __global real_t* restrict residual, const float act1_a,
    const float act1_b, const float act2_a, const float act2_b) {
  __local float s_l[CH];
  __local float h_l[RH];
  __local float g_l[GMAX];
#if HSPLIT > 1 || PSPLIT > 1
  __local float part[WG];
#else
  __local float* part = h_l;  // unread
#endif
  const gate_chunk chunk = gate_chunk_of(C, HW);
  se_squeeze(C, HW, x + chunk.base, s_l, part);
  gate_hidden(C, R, s_l, h_l, part, w1, b1, act1_a, act1_b);
  gate_values(R, chunk, h_l, g_l, w2, b2, act2_a, act2_b);
  gate_scale(HW, chunk, g_l, x, output, residual);
}
