// Tunable fill (op fill): output[O + i] = value for 0 <= i < E; the rest of
// the output is left as it is. fp16 outputs store value rounded to half
// (vstore_half: round to nearest even).
//
// Knobs (build-time defines, see fill_range.toml):
//   WG   work-items per work-group (1-D)
//   VW   elements per vector store (1, 2, 4, 8); the last vector stores
//        its lanes that fall before E one by one
//   EPW  vectors per work-item: work-group g covers vectors
//        g*WG*EPW .. (g+1)*WG*EPW - 1, work-item t those t + e*WG
// Shape defines (from the workload): FILL_E, FILL_O (prefixed, so that no
// build option renames an identifier of the compiler's own headers).
// Entry point: fill_range(output, value).
// Needs common/dtype.cl and common/vector.cl before it.

#define FILL_VECTORS ((FILL_E + VW - 1) / VW)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void fill_range(
    __global real_t* restrict output, const float value) {
  __global real_t* range = output + FILL_O;
  const int first = get_group_id(0) * (WG * EPW) + get_local_id(0);
  for (int e = 0; e < EPW; ++e) {
    const int v = first + e * WG;
    if (v >= FILL_VECTORS) return;
    store_vector(range, v * VW, FILL_E, (floatv)(value));
  }
}
