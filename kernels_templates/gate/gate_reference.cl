// The scaling step of the gate references (channel_gate_reference.cl,
// se_block_reference.cl): output[i] = x[i] * gate, plus residual[i] with
// RESIDUAL=1, for the H*W elements i of plane `plane` (n * C + c), in
// order. Needs common/dtype.cl before it.
inline void gate_reference_store(float gate, int plane, int HW,
                                 const __global real_t* x,
                                 const __global real_t* residual,
                                 __global real_t* output) {
  const size_t begin = (size_t)plane * HW;
  for (size_t i = begin; i < begin + HW; ++i) {
    float y = LOADF(x, i) * gate;
#if RESIDUAL
    y += LOADF(residual, i);
#endif
    STOREF(y, output, i);
  }
}
