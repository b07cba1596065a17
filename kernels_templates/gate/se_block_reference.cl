// Naive reference squeeze-and-excitation block (see se_block.cl for the
// formula): one work-item per plane (n, c), global size N*C. Each pools
// every channel of its image once, summing the hidden units in a private
// array of R floats (RH = R), then computes its gate g[n, c] and scales
// its H*W elements in order. Verifies candidates, is the speed baseline
// and the fallback kernel of emitted libraries, so it stays simple. Needs
// common/dtype.cl, gate/gate_act.cl and gate/gate_reference.cl before it.
__kernel void se_block_reference(
    const int N, const int C, const int HW, const int R,
    const __global real_t* x, __global real_t* output,
    const __global real_t* w1, const __global float* b1,
    const __global real_t* w2, const __global float* b2,
    const __global real_t* residual, const float act1_a, const float act1_b,
    const float act2_a, const float act2_b) {
  const int plane = get_global_id(0);
  if (plane >= N * C) return;
  const int n = plane / C;
  const int c = plane % C;
  float hidden[RH];
  for (int r = 0; r < R; ++r) hidden[r] = b1[r];
  for (int k = 0; k < C; ++k) {
    const size_t first = ((size_t)n * C + k) * HW;
    float sum = 0.0f;
    for (int i = 0; i < HW; ++i) sum += LOADF(x, first + i);
    const float mean = sum / (float)HW;
    for (int r = 0; r < R; ++r) {
      hidden[r] += LOADF(w1, (size_t)r * C + k) * mean;
    }
  }
  float gate = b2[c];
  for (int r = 0; r < R; ++r) {
    const float h = gate_act(ACT1, hidden[r], act1_a, act1_b);
    gate += LOADF(w2, (size_t)c * R + r) * h;
  }
  gate = gate_act(ACT2, gate, act2_a, act2_b);
  gate_reference_store(gate, plane, HW, x, residual, output);
}
