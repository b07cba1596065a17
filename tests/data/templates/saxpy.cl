// y = a * x + z over N floats: an example of a user's template.
// Knobs (defines): VW elements per work-item, WG work-group size.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void saxpy(const int n, const float a, const __global float* x,
           const __global float* z, __global float* y) {
  const int first = get_global_id(0) * VW;
  for (int v = 0; v < VW; ++v) {
    const int i = first + v;
    if (i < n) y[i] = a * x[i] + z[i];
  }
}

__kernel void saxpy_reference(const int n, const float a,
                              const __global float* x,
                              const __global float* z, __global float* y) {
  const int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + z[i];
}
