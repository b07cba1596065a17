// Tunable single-precision GEMM: C = A * B, all row-major.
//   A is M x K, B is K x N, C is M x N; any M, N, K >= 1.
//
// Knobs (build-time defines, see gemm_tiled.toml):
//   MWG, NWG   rows / columns of C per work-group
//   KWG        depth of one K tile (local memory tile, loop blocking)
//   MWI, NWI   rows / columns of C per work-item (register tile)
//   VW         vector width of B loads and C stores along N
//   SA, SB     1: stage A / B tiles in local memory, 0: read global memory
//   KUNROLL    unroll factor of the loop over one K tile
// Shape class defines (computed by the host from the workload):
//   EDGE_M, EDGE_N  1 when M % MWG != 0 / N % NWG != 0: out-of-range rows
//                   and columns read clamped indices and are never stored.
// The last K tile may be partial, so K needs no divisibility.
// Variant defines: DTYPE_FP16 (A, B, C stored as half; common/dtype.cl),
//   EPILOGUE_AXIS 0: none, 1: epilogue channel = row (1x1 convolution,
//   rows are output channels), 2: channel = column (dense layers), with
//   AFFINE and ACT of common/epilogue.cl.
// Needs common/dtype.cl, common/epilogue.cl and common/vector.cl (floatv,
// its loads and stores) before it.
// Entry points: gemm(M, N, K, A, B, C) and gemm_fused(..., scale, shift,
// act_a, act_b), which also takes a batch along NDRange dimension 2 (B and
// C advance by K*N and M*N per batch; A is shared).
//
// Work-item (tx, ty) of a work-group owns rows  m = m0 + i*MDIMC + ty
// and column vectors n = n0 + (j*NDIMC + tx)*VW .. +VW-1, a strided layout
// as in CLBlast's Xgemm (coalesced along N on GPUs).

#define MDIMC (MWG / MWI)
#define NDIMC (NWG / NWI)
#define WGS (MDIMC * NDIMC)
#define NVEC (NWI / VW)

#ifndef EPILOGUE_AXIS
#define EPILOGUE_AXIS 0
#endif

// Loads VW consecutive values of row `row` of a matrix with `cols` columns,
// starting at column n; columns past the end read the last column (their
// results are never stored).
inline floatv load_row_vector(const __global real_t* restrict p, int row,
                              int cols, int n) {
  const __global real_t* r = p + (size_t)row * cols;
#if EDGE_N
  if (n + VW > cols) {
    const int last = cols - 1;
#define AT(i) LOADF(r, min(n + (i), last))
    return GATHER(AT);
#undef AT
  }
#endif
  return VLOAD_G(r + n);
}

// Stages a K tile of A (MWG x kcount) into As[k][m] and of B (kcount x NWG)
// into Bs[k][n]; rows of the tile past kcount are zero.
inline void stage_tiles(const __global real_t* restrict A,
                        const __global real_t* restrict B, __local float* As,
                        __local float* Bs, int M, int N, int K, int m0, int n0,
                        int k0, int kcount, int lid) {
#if SA
  for (int idx = lid; idx < MWG * KWG; idx += WGS) {
    const int k = idx % KWG;
    int m = m0 + idx / KWG;
#if EDGE_M
    m = min(m, M - 1);
#endif
    As[k * MWG + idx / KWG] =
        k < kcount ? LOADF(A, (size_t)m * K + k0 + k) : 0.0f;
  }
#endif
#if SB
  for (int idx = lid; idx < KWG * NWG; idx += WGS) {
    const int k = idx / NWG;
    int n = n0 + idx % NWG;
#if EDGE_N
    n = min(n, N - 1);
#endif
    Bs[idx] = k < kcount ? LOADF(B, (size_t)(k0 + k) * N + n) : 0.0f;
  }
#endif
}

// One step of the K loop: acc += a(:, k) * b(k, :) over the register tile.
// k is the offset inside the current tile starting at k0.
inline void multiply_step(const __global real_t* restrict A,
                          const __global real_t* restrict B,
                          const __local float* As, const __local float* Bs,
                          const int* arow, const int* bcol, int N, int K,
                          int k0, int k, int tx, int ty,
                          floatv acc[MWI][NVEC]) {
  float a[MWI];
  floatv b[NVEC];
  for (int i = 0; i < MWI; ++i) {
#if SA
    a[i] = As[k * MWG + i * MDIMC + ty];
#else
    a[i] = LOADF(A, (size_t)arow[i] * K + k0 + k);
#endif
  }
  for (int j = 0; j < NVEC; ++j) {
#if SB
    b[j] = VLOAD_L(Bs + k * NWG + (j * NDIMC + tx) * VW);
#else
    b[j] = load_row_vector(B, k0 + k, N, bcol[j]);
#endif
  }
  for (int i = 0; i < MWI; ++i) {
    for (int j = 0; j < NVEC; ++j) {
      acc[i][j] = mad((floatv)(a[i]), b[j], acc[i][j]);
    }
  }
}

// The work of one work-group; As and Bs are its local tiles (declared by
// the kernels, as OpenCL 1.2 allows __local variables only there).
inline void gemm_tile(const int M, const int N, const int K,
                      const __global real_t* restrict A,
                      const __global real_t* restrict B,
                      __global real_t* restrict C, __local float* As,
                      __local float* Bs, const __global float* scale,
                      const __global float* shift, float act_a,
                      float act_b) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int lid = ty * NDIMC + tx;
  const int m0 = get_group_id(1) * MWG;
  const int n0 = get_group_id(0) * NWG;

  int arow[MWI];  // rows of A this work-item reads (clamped)
  int bcol[NVEC];  // first column of each B vector this work-item reads
  for (int i = 0; i < MWI; ++i) {
    arow[i] = m0 + i * MDIMC + ty;
#if EDGE_M
    arow[i] = min(arow[i], M - 1);
#endif
  }
  for (int j = 0; j < NVEC; ++j) bcol[j] = n0 + (j * NDIMC + tx) * VW;

  floatv acc[MWI][NVEC];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NVEC; ++j) acc[i][j] = (floatv)(0.0f);

  // One loop over K tiles; the last may be partial. Barriers stay at loop
  // level (never inside a conditional), which every OpenCL compiler
  // handles, PoCL's work-item loops included.
  const int tiles = (K + KWG - 1) / KWG;
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * KWG;
    const int kcount = min(KWG, K - k0);
#if SA || SB
    stage_tiles(A, B, As, Bs, M, N, K, m0, n0, k0, kcount, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    if (kcount == KWG) {
      for (int k = 0; k < KWG; k += KUNROLL) {
#pragma unroll
        for (int u = 0; u < KUNROLL; ++u) {
          multiply_step(A, B, As, Bs, arow, bcol, N, K, k0, k + u, tx, ty, acc);
        }
      }
    } else {
      for (int k = 0; k < kcount; ++k) {
        multiply_step(A, B, As, Bs, arow, bcol, N, K, k0, k, tx, ty, acc);
      }
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  for (int i = 0; i < MWI; ++i) {
    const int m = m0 + i * MDIMC + ty;
    if (m >= M) continue;
    __global real_t* crow = C + (size_t)m * N;
    for (int j = 0; j < NVEC; ++j) {
      const int n = bcol[j];
#if EPILOGUE_AXIS == 0
      if (n + VW <= N) {
        VSTORE_G(acc[i][j], crow + n);
        continue;
      }
#endif
      for (int v = 0; v < VW; ++v) {
        if (n + v >= N) break;
        float x = element(acc[i][j], v);
#if EPILOGUE_AXIS == 1
        x = epilogue(x, m, scale, shift, act_a, act_b);
#elif EPILOGUE_AXIS == 2
        x = epilogue(x, n + v, scale, shift, act_a, act_b);
#endif
        STOREF(x, crow, n + v);
      }
    }
  }
}

#if SA
#define DECLARE_TILE_A __local float As[KWG * MWG];
#else
#define DECLARE_TILE_A __local float* As = 0;
#endif
#if SB
#define DECLARE_TILE_B __local float Bs[KWG * NWG];
#else
#define DECLARE_TILE_B __local float* Bs = 0;
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const int M, const int N, const int K,
          const __global real_t* restrict A, const __global real_t* restrict B,
          __global real_t* restrict C) {
  DECLARE_TILE_A
  DECLARE_TILE_B
  gemm_tile(M, N, K, A, B, C, As, Bs, 0, 0, 0.0f, 0.0f);
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_fused(const int M, const int N, const int K,
                const __global real_t* restrict A,
                const __global real_t* restrict B, __global real_t* restrict C,
                const __global float* scale, const __global float* shift,
                const float act_a, const float act_b) {
  DECLARE_TILE_A
  DECLARE_TILE_B
  const size_t batch = get_group_id(2);
  gemm_tile(M, N, K, A, B + batch * K * N, C + batch * M * N, As, Bs, scale,
            shift, act_a, act_b);
}
