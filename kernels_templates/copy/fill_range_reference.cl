// Naive reference fill (see fill_range.cl): one work-item per element,
// global size E, the range as arguments. Verifies candidates, is the speed
// baseline and the fallback kernel of emitted libraries. Needs
// common/dtype.cl before it.
__kernel void fill_range_reference(const int E, const int O,
                                   __global real_t* output, const float value) {
  const int i = get_global_id(0);
  if (i < E) STOREF(value, output, O + i);
}
