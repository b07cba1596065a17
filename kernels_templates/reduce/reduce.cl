// Tunable reduction over the middle axis of an O x R x I tensor (op
// reduce): output[o, i] = fn over r of input[o, r, i] (reduce_fn.cl has
// the fns). Any O, R, I >= 1.
//
// Knobs (build-time defines, see reduce_axis.toml), a work-group of
// WGI x SPLIT x WGO work-items:
//   WGI    outputs along I a work-group covers (consecutive i: coalesced
//          reads when I > 1)
//   SPLIT  work-items sharing one output's R values: work-item s reduces
//          r = s, s + SPLIT, ..., then the SPLIT partial results are
//          combined by a tree in local memory (a power of two; 1: no
//          local memory, one work-item sums the whole column in order)
//   WGO    outputs along O a work-group covers (for I = 1, where WGI
//          stays 1)
// Shape defines (from the workload): RED_O, RED_R, RED_I, RED_FN.
// Entry point: reduce_axis(input, output). Work-items past O or I read
// the last output's column and store nothing.
// Needs common/dtype.cl and reduce/reduce_fn.cl before it.

__kernel __attribute__((reqd_work_group_size(WGI, SPLIT, WGO))) void
reduce_axis(const __global real_t* restrict input,
            __global real_t* restrict output) {
  const int i = get_global_id(0);
  const int s = get_local_id(1);
  const int o = get_global_id(2);
  const __global real_t* column =
      input + (size_t)min(o, RED_O - 1) * RED_R * RED_I + min(i, RED_I - 1);
  red_t a = RED_INIT;
  for (int r = s; r < RED_R; r += SPLIT) {
    a = red_add(a, LOADF(column, (size_t)r * RED_I));
  }
#if SPLIT > 1
  // Tree over s; every work-item reaches every barrier.
  __local red_t partial[WGO * SPLIT * WGI];
  const int row = get_local_id(2) * SPLIT * WGI + get_local_id(0);
  partial[row + s * WGI] = a;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = SPLIT / 2; stride > 0; stride >>= 1) {
    if (s < stride) {
      partial[row + s * WGI] =
          red_combine(partial[row + s * WGI], partial[row + (s + stride) * WGI]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  a = partial[row];
#endif
  if (s == 0 && i < RED_I && o < RED_O) {
    STOREF(red_final(a, RED_R), output, (size_t)o * RED_I + i);
  }
}
