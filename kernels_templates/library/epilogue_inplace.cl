// The epilogue of common/epilogue.cl applied in place to a library call's
// output (library templates: the [kernel] after the [library] call), for
// workloads whose attrs ask for one (AFFINE, ACT, POST or RESIDUAL not 0;
// the residual, of the output's shape, read at the output element's own
// index). Needs common/dtype.cl and common/epilogue.cl before it.
//
// The output is viewed as outer x channels x inner elements, the channel
// of the affine step being the middle index: global size (inner, channels,
// outer), one work-item per element, no bounds to check. E.g.
//   conv2d NCHW output:    (P * Q, K, N)   per output channel
//   dense M x N output:    (1, N, M)       per output feature (column)
//   batched GEMM per row:  (N, M, batch)   per row of each C_i
__kernel void epilogue_inplace(__global real_t* out,
                               const __global float* scale,
                               const __global float* shift,
                               const __global real_t* residual,
                               const float act_a, const float act_b) {
  const size_t x = get_global_id(0);
  const int c = get_global_id(1);
  const size_t o = get_global_id(2);
  const size_t i = (o * get_global_size(1) + c) * get_global_size(0) + x;
  epilogue_store(LOADF(out, i), i, c, out, scale, shift, residual, act_a,
                 act_b);
}
