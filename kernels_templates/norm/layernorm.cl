// Tunable layer normalisation over the last axis of an N x D row-major
// tensor (ONNX LayerNormalization, axis -1, biased variance):
//   output[n, d] = (x[n, d] - mean_n) / sqrt(var_n + eps)
//                  (* gamma[d] + beta[d] when AFFINE is 1).
// Any N, D >= 1.
//
// Knobs (build-time defines, see layernorm_rows.toml):
//   WPR     work-items per row (a power of two, 1 .. 256), combining their
//           partial statistics by a tree reduction in local memory
//   RPG     rows per work-group (work-group WPR x RPG)
//   VW      vector width of loads and stores along D
//   EPW     vectors per work-item per pass, held in registers
// Shape-class define (computed by the host from the workload):
//   SINGLE_PASS 1 when one pass covers the row (D <= WPR*VW*EPW): the row
//               stays in registers and the input is read once; else twice
//               (statistics, then outputs).
// Statistics: each work-item folds each pass's block of its elements
// (block mean, then the block's sum of squared deviations from it, a
// two-pass step in registers) into a running (count, mean, M2) with Chan,
// Golub and LeVeque's pairwise update (1979), and work-items are merged the
// same way in the tree; var = M2 / D. This stays accurate when the mean is
// large against the spread, unlike sum and sum of squares.
// Entry point: layernorm(N, D, eps, input, output, gamma, beta); gamma and
// beta are float (D elements; unread when AFFINE is 0).
// Needs common/dtype.cl and common/vector.cl before it.
//
// In each pass of CHUNK = WPR*VW*EPW elements, work-item tx owns vectors
// (e*WPR + tx)*VW .. +VW-1 for e < EPW (coalesced along D on GPUs). Lanes
// past D are left out of the statistics. Work-items of rows past N read
// the last row and store nothing.

#define CHUNK (WPR * VW * EPW)

// VW elements of a row from column d on; columns past D read 0.
inline floatv load_vector(const __global real_t* row, int d, int D) {
  if (d + VW <= D) return VLOAD_G(row + d);
#define AT(v) (d + (v) < D ? LOADF(row, d + (v)) : 0.0f)
  return GATHER(AT);
#undef AT
}

// Merges statistics b = (count, mean, M2) into a (Chan et al.).
inline float3 merge_stats(float3 a, float3 b) {
  if (b.x == 0.0f) return a;
  if (a.x == 0.0f) return b;
  const float n = a.x + b.x;
  const float delta = b.y - a.y;
  return (float3)(n, a.y + delta * (b.x / n),
                  a.z + b.z + delta * delta * (a.x * b.x / n));
}

// Folds the lanes of x[] that fall before D (pass starting at column
// `base`) into the running statistics s.
inline float3 accumulate(const floatv x[EPW], int base, int tx, int D,
                         float3 s) {
  float sum = 0.0f;
  int count = 0;
  for (int e = 0; e < EPW; ++e) {
    const int d = base + (e * WPR + tx) * VW;
    const int valid = clamp(D - d, 0, VW);
    count += valid;
    sum += sum_lanes(x[e]);  // lanes past D hold 0
  }
  if (count == 0) return s;
  const float mean = sum / (float)count;
  float m2 = 0.0f;
  for (int e = 0; e < EPW; ++e) {
    const int d = base + (e * WPR + tx) * VW;
    for (int lane = 0; lane < VW; ++lane) {
      if (d + lane < D) {
        const float dev = element(x[e], lane) - mean;
        m2 += dev * dev;
      }
    }
  }
  return merge_stats(s, (float3)((float)count, mean, m2));
}

// The output values of x at columns d .. d+VW-1.
inline floatv normalize(floatv x, int d, int D, float mean, float inv_std,
                        const __global float* gamma,
                        const __global float* beta) {
  floatv y = (x - mean) * inv_std;
#if AFFINE
#define AT(v) \
  (element(y, (v)) * gamma[min(d + (v), D - 1)] + beta[min(d + (v), D - 1)])
  y = GATHER(AT);
#undef AT
#endif
  return y;
}

__kernel __attribute__((reqd_work_group_size(WPR, RPG, 1))) void layernorm(
    const int N, const int D, const float eps,
    const __global real_t* restrict input, __global real_t* restrict output,
    const __global float* restrict gamma, const __global float* restrict beta) {
#if WPR > 1
  __local float red_n[RPG * WPR];
  __local float red_m[RPG * WPR];
  __local float red_q[RPG * WPR];
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int row = get_group_id(1) * RPG + ty;
  const __global real_t* in = input + (size_t)min(row, N - 1) * D;

  float3 s = (float3)(0.0f, 0.0f, 0.0f);  // (count, mean, M2)
  floatv x[EPW];
#if SINGLE_PASS
  for (int e = 0; e < EPW; ++e) x[e] = load_vector(in, (e * WPR + tx) * VW, D);
  s = accumulate(x, 0, tx, D, s);
#else
  for (int base = 0; base < D; base += CHUNK) {
    for (int e = 0; e < EPW; ++e) {
      x[e] = load_vector(in, base + (e * WPR + tx) * VW, D);
    }
    s = accumulate(x, base, tx, D, s);
  }
#endif

#if WPR > 1
  // Tree reduction of the statistics; every work-item reaches every
  // barrier (the loop's trip count is the same for all).
  __local float* my_n = red_n + ty * WPR;
  __local float* my_m = red_m + ty * WPR;
  __local float* my_q = red_q + ty * WPR;
  my_n[tx] = s.x;
  my_m[tx] = s.y;
  my_q[tx] = s.z;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = WPR / 2; stride > 0; stride >>= 1) {
    if (tx < stride) {
      const float3 m = merge_stats(
          (float3)(my_n[tx], my_m[tx], my_q[tx]),
          (float3)(my_n[tx + stride], my_m[tx + stride], my_q[tx + stride]));
      my_n[tx] = m.x;
      my_m[tx] = m.y;
      my_q[tx] = m.z;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  s = (float3)(my_n[0], my_m[0], my_q[0]);
#endif
  const float mean = s.y;
  const float inv_std = rsqrt(s.z / (float)D + eps);

  if (row >= N) return;
  __global real_t* out = output + (size_t)row * D;
#if SINGLE_PASS
  for (int e = 0; e < EPW; ++e) {
    const int d = (e * WPR + tx) * VW;
    if (d < D) {
      store_vector(out, d, D,
                   normalize(x[e], d, D, mean, inv_std, gamma, beta));
    }
  }
#else
  for (int base = 0; base < D; base += CHUNK) {
    for (int e = 0; e < EPW; ++e) {
      const int d = base + (e * WPR + tx) * VW;
      if (d < D) {
        store_vector(
            out, d, D,
            normalize(load_vector(in, d, D), d, D, mean, inv_std, gamma, beta));
      }
    }
  }
#endif
}
