// Deterministic input generation on the device, so no input data crosses
// the network: element i of a buffer with seed s is the same on every
// device. The mixer is MurmurHash3's 32-bit finaliser (fmix32).
// Element i of the stream `seed`: 24 random bits -> [-1, 1), exactly
// representable in fp32.
inline float uniform_value(uint i, uint seed) {
  uint x = i * 0x9E3779B9u ^ (seed * 0x85EBCA6Bu + 0x6A09E667u);
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

__kernel void tunefleet_fill_uniform(__global float* p, const uint n,
                                     const uint seed) {
  const uint i = get_global_id(0);
  if (i < n) p[i] = uniform_value(i, seed);
}

// The same values stored as IEEE half (vstore_half is core OpenCL 1.2 and
// needs no cl_khr_fp16), for fp16 workloads.
__kernel void tunefleet_fill_uniform_half(__global half* p, const uint n,
                                          const uint seed) {
  const uint i = get_global_id(0);
  if (i < n) vstore_half(uniform_value(i, seed), i, p);
}
