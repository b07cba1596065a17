// Naive reference channel gate (see channel_gate.cl for the formula): one
// work-item per plane (n, c), global size N*C, computing its gate g[n, c]
// from s (the hidden units recomputed on the fly, no local memory) and
// then scaling its H*W elements in order. Verifies candidates, is the
// speed baseline and the fallback kernel of emitted libraries, so it stays
// simple. Needs common/dtype.cl, gate/gate_act.cl and gate/gate_reference.cl
// before it.
__kernel void channel_gate_reference(
    const int N, const int C, const int HW, const int R,
    const __global real_t* x, const __global real_t* s,
    __global real_t* output, const __global real_t* w1,
    const __global float* b1, const __global real_t* w2,
    const __global float* b2, const __global real_t* residual,
    const float act1_a, const float act1_b, const float act2_a,
    const float act2_b) {
  const int plane = get_global_id(0);
  if (plane >= N * C) return;
  const int n = plane / C;
  const int c = plane % C;
  float gate = b2[c];
  for (int r = 0; r < R; ++r) {
    float hidden = b1[r];
    for (int k = 0; k < C; ++k) {
      hidden += LOADF(w1, (size_t)r * C + k) * LOADF(s, (size_t)n * C + k);
    }
    gate += LOADF(w2, (size_t)c * R + r) * gate_act(ACT1, hidden, act1_a, act1_b);
  }
  gate = gate_act(ACT2, gate, act2_a, act2_b);
  gate_reference_store(gate, plane, HW, x, residual, output);
}
