// See hostile.toml. MODE picks how the kernel misbehaves.
__kernel void hostile(const int N, __global const float* x,
                      __global float* y) {
  const int i = get_global_id(0);
  if (i >= N) return;
#if MODE == 1
  // Volatile reads are side effects: the compiler may not assume the loop
  // ends.
  volatile int spin = 1;
  while (spin) {
  }
  y[i] = x[i];
#elif MODE == 2
  // 4 PiB past the buffer: beyond any user address space (and beyond
  // AddressSanitizer's shadow memory), so the write always faults.
  y[(long)i + 0x4000000000000L] = x[i];
#elif MODE == 3
  this_is_not_opencl_c(i);
#elif MODE == 4
  y[i] = NAN;
#else
  y[i] = 2.0f * x[i];
#endif
}

__kernel void hostile_reference(const int N, __global const float* x,
                                __global float* y) {
  const int i = get_global_id(0);
  if (i < N) y[i] = 2.0f * x[i];
}
