// Tunable softmax over the last axis of an N x D row-major tensor:
//   output[n, d] = exp(x[n, d] - m[n]) / sum_d' exp(x[n, d'] - m[n]),
// m[n] = max_d x[n, d] (subtracting the row max keeps exp finite). Any
// N, D >= 1.
//
// Knobs (build-time defines, see softmax_rows.toml):
//   WPR     work-items per row (a power of two, 1 .. 256), combining their
//           partial results by a tree reduction in local memory
//   RPG     rows per work-group (work-group WPR x RPG)
//   VW      vector width of loads and stores along D
//   EPW     vectors per work-item per pass, held in registers
// Shape-class define (computed by the host from the workload):
//   SINGLE_PASS 1 when one pass covers the row (D <= WPR*VW*EPW): the row
//               stays in registers and the input is read once; else the
//               input is read twice: once for the row's max and sum
//               (online softmax, Milakov & Gimelshein 2018: the running
//               sum is rescaled by exp(old max - new max) when the max
//               grows), once to write the outputs.
// Entry point: softmax(N, D, input, output).
// Needs common/dtype.cl and common/vector.cl before it.
//
// In each pass of CHUNK = WPR*VW*EPW elements, work-item tx owns vectors
// (e*WPR + tx)*VW .. +VW-1 for e < EPW (coalesced along D on GPUs). Lanes
// past D read -INFINITY (exp gives 0). Work-items of rows past N read the
// last row and store nothing.

#define CHUNK (WPR * VW * EPW)

// VW elements of a row from column d on; columns past D read -INFINITY.
inline floatv load_vector(const __global real_t* row, int d, int D) {
  if (d + VW <= D) return VLOAD_G(row + d);
#define AT(v) (d + (v) < D ? LOADF(row, d + (v)) : -INFINITY)
  return GATHER(AT);
#undef AT
}

// Folds a pass's values x into ms = (running max m, running sum of
// exp(x - m)) and returns the new pair; a pass without valid lanes changes
// nothing.
inline float2 accumulate(const floatv x[EPW], float2 ms) {
  float pm = -INFINITY;
  for (int e = 0; e < EPW; ++e) pm = fmax(pm, max_lanes(x[e]));
  if (pm == -INFINITY) return ms;
  const float mn = fmax(ms.x, pm);
  float sum = 0.0f;
  for (int e = 0; e < EPW; ++e) sum += sum_lanes(exp(x[e] - mn));
  // With no earlier elements ms = (-INFINITY, 0): 0 * exp(-inf) = 0.
  return (float2)(mn, ms.y * exp(ms.x - mn) + sum);
}

__kernel __attribute__((reqd_work_group_size(WPR, RPG, 1))) void softmax(
    const int N, const int D, const __global real_t* restrict input,
    __global real_t* restrict output) {
#if WPR > 1
  __local float red_m[RPG * WPR];
  __local float red_s[RPG * WPR];
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * RPG + ty;
  const __global real_t* in = input + (size_t)min(row, N - 1) * D;

  // (running max of this work-item's elements, running sum of exp(x - max))
  float2 ms = (float2)(-INFINITY, 0.0f);
  floatv x[EPW];
#if SINGLE_PASS
  for (int e = 0; e < EPW; ++e) x[e] = load_vector(in, (e * WPR + tx) * VW, D);
  ms = accumulate(x, ms);
#else
  for (int base = 0; base < D; base += CHUNK) {
    for (int e = 0; e < EPW; ++e) {
      x[e] = load_vector(in, base + (e * WPR + tx) * VW, D);
    }
    ms = accumulate(x, ms);
  }
#endif
  float m = ms.x;
  float s = ms.y;

#if WPR > 1
  // Tree reduction of (max, sum) pairs; every work-item reaches every
  // barrier (the loop's trip count is the same for all).
  __local float* my_m = red_m + ty * WPR;
  __local float* my_s = red_s + ty * WPR;
  my_m[tx] = m;
  my_s[tx] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = WPR / 2; stride > 0; stride >>= 1) {
    if (tx < stride) {
      const float m1 = my_m[tx], m2 = my_m[tx + stride];
      const float s1 = my_s[tx], s2 = my_s[tx + stride];
      const float mn = fmax(m1, m2);
      // A side without elements has s = 0 and m = -INFINITY: skip it
      // (exp(-inf - -inf) is NaN).
      my_s[tx] = (s1 > 0.0f ? s1 * exp(m1 - mn) : 0.0f) +
                 (s2 > 0.0f ? s2 * exp(m2 - mn) : 0.0f);
      my_m[tx] = mn;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = my_m[0];
  s = my_s[0];
#endif

  if (row >= N) return;
  __global real_t* out = output + (size_t)row * D;
#if SINGLE_PASS
  for (int e = 0; e < EPW; ++e) {
    store_vector(out, (e * WPR + tx) * VW, D, exp(x[e] - m) / s);
  }
#else
  for (int base = 0; base < D; base += CHUNK) {
    for (int e = 0; e < EPW; ++e) {
      const int d = base + (e * WPR + tx) * VW;
      store_vector(out, d, D, exp(load_vector(in, d, D) - m) / s);
    }
  }
#endif
}
