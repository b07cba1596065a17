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
//   HALF       1: products and accumulators in half (cl_khr_fp16, fp16
//              storage; common/dtype.cl), 0: in float
//   IMB        1: B is a read-only image2d_t (common/image.cl, IMAGE_READS
//              1) of RGBA texels, four consecutive columns each, and row
//              b*K + k holds row k of batch b's B; read a texel per four
//              columns (needs VW >= 4, or SB = 1: the B tile is staged from
//              texels). 0: B is a buffer
// Shape class defines (computed by the host from the workload):
//   EDGE_M, EDGE_N  1 when M % MWG != 0 / N % NWG != 0: out-of-range rows
//                   and columns read clamped indices and are never stored.
// The last K tile may be partial, so K needs no divisibility.
// Variant defines: DTYPE_FP16 (A, B, C stored as half; common/dtype.cl),
//   EPILOGUE_AXIS 0: none, 1: epilogue channel = row (1x1 convolution,
//   rows are output channels), 2: channel = column (dense layers), with
//   AFFINE, RESIDUAL, ACT and POST of common/epilogue.cl (the residual: a
//   tensor of C's shape, batches included, read at C's element),
//   BATCH_A 1: A advances by M*K per batch too (op batch_matmul, C[b] =
//   A[b] * B[b]), 0: A is shared by the batches.
// Needs common/dtype.cl, common/epilogue.cl, common/vector.cl (floatv,
// its loads and stores) and common/image.cl before it.
// Entry points: gemm(M, N, K, A, B, C) and gemm_fused(..., scale, shift,
// residual, act_a, act_b). Both take a batch along NDRange dimension 2 (B,
// C and the residual advance by K*N, M*N and M*N per batch; A as BATCH_A
// says); a 2D NDRange is one batch.
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
#ifndef IMB
#define IMB 0
#endif
#ifndef BATCH_A
#define BATCH_A 0
#endif

// B's type: an image of texels, or a buffer of the storage type.
#if IMB
#if !IMAGE_READS
#error "IMB=1 needs common/image.cl with IMAGE_READS=1"
#endif
#if !SB && VW < 4
#error "IMB=1 reads B in texels of four columns: it needs VW >= 4 or SB=1"
#endif
#define B_TYPE __read_only image2d_t
#else
#define B_TYPE const __global real_t* restrict
#endif

// Loads VW consecutive values of row `row` of B (`cols` columns), starting
// at column n, in the arithmetic type; columns past the end read the last
// column, or with IMB the last texel (their results are never stored).
// Without SB only (SB reads B from the local tile).
#if !SB
inline accv load_row_vector(B_TYPE B, int row, int cols, int n) {
#if IMB
  // n is a multiple of VW, so of 4: texel n / 4 starts the vector.
  const int x = n / 4;
#if EDGE_N
  const int last = (cols + 3) / 4 - 1;
#define TEXEL(i) read_texel(B, min(x + (i), last), row)
#else
#define TEXEL(i) read_texel(B, x + (i), row)
#endif
#if VW == 4
  return TEXEL(0);
#else
  return (accv)(TEXEL(0), TEXEL(1));
#endif
#undef TEXEL
#else
  const __global real_t* r = B + (size_t)row * cols;
#if EDGE_N
  if (n + VW > cols) {
    const int last = cols - 1;
#define AT(i) LOADC(r, min(n + (i), last))
    return CGATHER(AT);
#undef AT
  }
#endif
  return CLOAD_G(r + n);
#endif
}
#endif  // !SB

// Stages a K tile of A (MWG x kcount) into As[k][m] and of B (kcount x NWG)
// into Bs[k][n]; rows of the tile past kcount are zero. B's rows start at
// row brow0 (the batch's first, with IMB; else 0).
inline void stage_tiles(const __global real_t* restrict A, B_TYPE B,
                        __local acc_t* As, __local acc_t* Bs, int M, int N,
                        int K, int m0, int n0, int k0, int kcount, int brow0,
                        int lid) {
#if SA
  for (int idx = lid; idx < MWG * KWG; idx += WGS) {
    const int k = idx % KWG;
    int m = m0 + idx / KWG;
#if EDGE_M
    m = min(m, M - 1);
#endif
    As[k * MWG + idx / KWG] =
        k < kcount ? LOADC(A, (size_t)m * K + k0 + k) : (acc_t)0;
  }
#endif
#if SB && IMB
  // A texel (four columns) per step; NWG is a multiple of 4.
  for (int idx = lid; idx < KWG * (NWG / 4); idx += WGS) {
    const int k = idx / (NWG / 4);
    const int x = idx - k * (NWG / 4);
    int t = n0 / 4 + x;
#if EDGE_N
    t = min(t, (N + 3) / 4 - 1);
#endif
    acc4 v = (acc4)(0);
    if (k < kcount) v = read_texel(B, t, brow0 + k0 + k);
    vstore4(v, 0, Bs + k * NWG + 4 * x);
  }
#elif SB
  for (int idx = lid; idx < KWG * NWG; idx += WGS) {
    const int k = idx / NWG;
    int n = n0 + idx % NWG;
#if EDGE_N
    n = min(n, N - 1);
#endif
    Bs[idx] = k < kcount ? LOADC(B, (size_t)(k0 + k) * N + n) : (acc_t)0;
  }
#endif
}

// One step of the K loop: acc += a(:, k) * b(k, :) over the register tile.
// k is the offset inside the current tile starting at k0.
inline void multiply_step(const __global real_t* restrict A, B_TYPE B,
                          const __local acc_t* As, const __local acc_t* Bs,
                          const int* arow, const int* bcol, int N, int K,
                          int k0, int k, int brow0, int tx, int ty,
                          accv acc[MWI][NVEC]) {
  acc_t a[MWI];
  accv b[NVEC];
  for (int i = 0; i < MWI; ++i) {
#if SA
    a[i] = As[k * MWG + i * MDIMC + ty];
#else
    a[i] = LOADC(A, (size_t)arow[i] * K + k0 + k);
#endif
  }
  for (int j = 0; j < NVEC; ++j) {
#if SB
    b[j] = VLOAD_L(Bs + k * NWG + (j * NDIMC + tx) * VW);
#else
    b[j] = load_row_vector(B, brow0 + k0 + k, N, bcol[j]);
#endif
  }
  for (int i = 0; i < MWI; ++i) {
    for (int j = 0; j < NVEC; ++j) {
      acc[i][j] = mad((accv)(a[i]), b[j], acc[i][j]);
    }
  }
}

// The work of one work-group; As and Bs are its local tiles (declared by
// the kernels, as OpenCL 1.2 allows __local variables only there). B's rows
// start at row brow0. Res: the residual of this C (read with RESIDUAL=1).
inline void gemm_tile(const int M, const int N, const int K,
                      const __global real_t* restrict A, B_TYPE B,
                      const int brow0, __global real_t* restrict C,
                      __local acc_t* As, __local acc_t* Bs,
                      const __global float* scale, const __global float* shift,
                      const __global real_t* Res, float act_a, float act_b) {
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

  accv acc[MWI][NVEC];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NVEC; ++j) acc[i][j] = (accv)(0);

  // One loop over K tiles; the last may be partial. Barriers stay at loop
  // level (never inside a conditional), which every OpenCL compiler
  // handles, PoCL's work-item loops included.
  const int tiles = (K + KWG - 1) / KWG;
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * KWG;
    const int kcount = min(KWG, K - k0);
#if SA || SB
    stage_tiles(A, B, As, Bs, M, N, K, m0, n0, k0, kcount, brow0, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    if (kcount == KWG) {
      for (int k = 0; k < KWG; k += KUNROLL) {
#pragma unroll
        for (int u = 0; u < KUNROLL; ++u) {
          multiply_step(A, B, As, Bs, arow, bcol, N, K, k0, k + u, brow0, tx,
                        ty, acc);
        }
      }
    } else {
      for (int k = 0; k < kcount; ++k) {
        multiply_step(A, B, As, Bs, arow, bcol, N, K, k0, k, brow0, tx, ty,
                      acc);
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
      const floatv sum = TO_FLOATV(acc[i][j]);
#if EPILOGUE_AXIS == 0
      if (n + VW <= N) {
        VSTORE_G(sum, crow + n);
        continue;
      }
#endif
      for (int v = 0; v < VW; ++v) {
        if (n + v >= N) break;
        float x = element(sum, v);
#if EPILOGUE_AXIS != 0
#if RESIDUAL
        const float r = LOADF(Res, (size_t)m * N + n + v);
#else
        const float r = 0.0f;
#endif
#if EPILOGUE_AXIS == 1
        x = epilogue_residual(x, r, m, scale, shift, act_a, act_b);
#else
        x = epilogue_residual(x, r, n + v, scale, shift, act_a, act_b);
#endif
#endif
        STOREF(x, crow, n + v);
      }
    }
  }
}

#if SA
#define DECLARE_TILE_A __local acc_t As[KWG * MWG];
#else
#define DECLARE_TILE_A __local acc_t* As = 0;
#endif
#if SB
#define DECLARE_TILE_B __local acc_t Bs[KWG * NWG];
#else
#define DECLARE_TILE_B __local acc_t* Bs = 0;
#endif

// The work of one work-group of batch b = get_group_id(2): B, C and the
// residual advance by K*N, M*N and M*N per batch (with IMB, batch b's B is
// rows b*K .. b*K+K-1 of the image), A by M*K with BATCH_A.
inline void gemm_batch_tile(const int M, const int N, const int K,
                            const __global real_t* restrict A, B_TYPE B,
                            __global real_t* restrict C, __local acc_t* As,
                            __local acc_t* Bs, const __global float* scale,
                            const __global float* shift,
                            const __global real_t* residual, float act_a,
                            float act_b) {
  const size_t batch = get_group_id(2);
#if BATCH_A
  A += batch * M * K;
#endif
#if RESIDUAL
  const __global real_t* res = residual + batch * M * N;
#else
  const __global real_t* res = residual;  // not read
#endif
#if IMB
  gemm_tile(M, N, K, A, B, (int)batch * K, C + batch * M * N, As, Bs, scale,
            shift, res, act_a, act_b);
#else
  gemm_tile(M, N, K, A, B + batch * K * N, 0, C + batch * M * N, As, Bs, scale,
            shift, res, act_a, act_b);
#endif
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const int M, const int N, const int K,
          const __global real_t* restrict A, B_TYPE B,
          __global real_t* restrict C) {
  DECLARE_TILE_A
  DECLARE_TILE_B
  gemm_batch_tile(M, N, K, A, B, C, As, Bs, 0, 0, 0, 0.0f, 0.0f);
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_fused(const int M, const int N, const int K,
                const __global real_t* restrict A, B_TYPE B,
                __global real_t* restrict C, const __global float* scale,
                const __global float* shift, const __global real_t* residual,
                const float act_a, const float act_b) {
  DECLARE_TILE_A
  DECLARE_TILE_B
  gemm_batch_tile(M, N, K, A, B, C, As, Bs, scale, shift, residual, act_a,
                  act_b);
}
