// Tunable channel gate over NCHW, the excitation and scaling of a
// squeeze-and-excitation block in one launch: for x (N x C x H x W) and
// its pooled s (N x C):
//   h[n, r] = act1(sum_c w1[r, c] * s[n, c] + b1[r])      (r < R)
//   g[n, c] = act2(sum_r w2[c, r] * h[n, r] + b2[c])
//   output[n, c, :, :] = x[n, c, :, :] * g[n, c] (+ residual[n, c, :, :])
// w1 R x C and w2 C x R as ONNX's 1x1 Conv weights store them; act1, act2
// numbered as gate_act.cl says (ACT1, ACT2); RESIDUAL 1 adds a tensor of
// x's shape. Any N, C, H, W, R >= 1.
//
// Each image's C*H*W elements are processed flat, CHUNK = WG*VW*EPW
// consecutive elements a work-group (work-item t takes vectors
// (e*WG + t)*VW, e < EPW: a step's loads are contiguous across the group).
// Every work-group recomputes the small FC work it needs, in local memory:
// s[n, :] (C floats), all of h[n, :] (R floats), then g of the at most GMAX
// channels its chunk touches. The FCs cost 2*R*C + 2*R*GMAX flops a group
// against CHUNK elements scaled; the tuner weighs that against more groups.
//
// Knobs (build-time defines, see channel_gate_direct.toml):
//   WG      work-items per work-group (1-D)
//   VW      vector width of x's loads and the output's stores
//   EPW     vectors per work-item
//   HSPLIT  work-items summing one hidden unit's C products (strided, then
//           a tree in local memory; 1: one work-item a unit)
// Shape defines (from the workload): CH = C, RH = R (local array sizes),
// GMAX (channels a chunk may touch), UNIFORM_PLANE (VW divides H*W: a
// whole vector lies in one plane).
// Entry point: channel_gate(N, C, HW, R, x, s, output, w1, b1, w2, b2,
// residual, act1_a, act1_b, act2_a, act2_b), HW = H*W.
// Needs common/dtype.cl, common/vector.cl, gate/gate_act.cl and
// gate/gate_fc.cl before it.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void channel_gate(
    const int N, const int C, const int HW, const int R,
    const __global real_t* restrict x, const __global real_t* restrict s,
    __global real_t* restrict output, const __global real_t* restrict w1,
    const __global float* restrict b1, const __global real_t* restrict w2,
    const __global float* restrict b2,
    const __global real_t* restrict residual, const float act1_a,
    const float act1_b, const float act2_a, const float act2_b) {
  __local float s_l[CH];
  __local float h_l[RH];
  __local float g_l[GMAX];
#if HSPLIT > 1
  __local float part[WG];
#else
  __local float* part = h_l;  // unread
#endif
  const gate_chunk chunk = gate_chunk_of(C, HW);
  for (int c = get_local_id(0); c < C; c += WG) {
    s_l[c] = LOADF(s, chunk.n * C + c);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  gate_hidden(C, R, s_l, h_l, part, w1, b1, act1_a, act1_b);
  gate_values(R, chunk, h_l, g_l, w2, b2, act2_a, act2_b);
  gate_scale(HW, chunk, g_l, x, output, residual);
}
