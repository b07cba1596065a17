// Tunable batched matrix product (op batch_matmul, ONNX MatMul of two
// computed tensors): C[b] = A[b] * B[b], all row-major and tight.
//   A is batch x M x K, B is batch x K x N, C is batch x M x N; any sizes
//   >= 1 (no divisibility: edge tiles read clamped indices and are never
//   stored, the last K tile may be partial).
//
// Knobs (build-time defines, see batch_matmul_tiled.toml):
//   MWG, NWG   rows / columns of C per work-group
//   KWG        depth of one K tile (local memory tile, loop blocking)
//   MWI, NWI   rows / columns of C per work-item (register tile)
//   VW         vector width of B loads and C stores along N
//   SA, SB     1: stage the K tile of A / B in local memory, 0: read
//              global memory
// Shape class defines (from the workload): EDGE_M, EDGE_N 1 when
// M % MWG != 0 / N % NWG != 0.
// Variant define: DTYPE_FP16 (A, B, C stored as half; common/dtype.cl);
// arithmetic is in float.
// Needs common/dtype.cl and common/vector.cl before it.
//
// NDRange: (ceil(N/NWG)*NWG/NWI, ceil(M/MWG)*MWG/MWI, batch) with
// work-group (NWG/NWI, MWG/MWI, 1). Work-item (tx, ty) of a work-group owns
// rows m = m0 + i*MDIMC + ty and column vectors n = n0 + (j*NDIMC + tx)*VW
// .. +VW-1, a strided layout as in CLBlast's Xgemm (coalesced along N on
// GPUs).

#define MDIMC (MWG / MWI)
#define NDIMC (NWG / NWI)
#define WGS (MDIMC * NDIMC)
#define NVEC (NWI / VW)

// VW consecutive values of row `row` of B (N columns) from column n; columns
// past the end read the last column (their results are never stored).
inline floatv bmm_row_vector(const __global real_t* restrict B, int row, int N,
                             int n) {
  const __global real_t* r = B + (size_t)row * N;
#if EDGE_N
  if (n + VW > N) {
#define AT(i) LOADF(r, min(n + (i), N - 1))
    return GATHER(AT);
#undef AT
  }
#endif
  return VLOAD_G(r + n);
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1))) void
batch_matmul(const int batch, const int M, const int N, const int K,
             const __global real_t* restrict A,
             const __global real_t* restrict B, __global real_t* restrict C) {
#if SA
  __local float As[KWG * MWG];  // As[k][m]
#endif
#if SB
  __local float Bs[KWG * NWG];  // Bs[k][n]
#endif
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int lid = ty * NDIMC + tx;
  const int m0 = get_group_id(1) * MWG;
  const int n0 = get_group_id(0) * NWG;
  const size_t b = get_group_id(2);
  A += b * M * K;
  B += b * K * N;
  C += b * M * N;

  int arow[MWI];   // rows of A this work-item reads (clamped)
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
  // level, never inside a conditional.
  const int tiles = (K + KWG - 1) / KWG;
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * KWG;
    const int kcount = min(KWG, K - k0);
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
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int k = 0; k < kcount; ++k) {
      float av[MWI];
      floatv bv[NVEC];
      for (int i = 0; i < MWI; ++i) {
#if SA
        av[i] = As[k * MWG + i * MDIMC + ty];
#else
        av[i] = LOADF(A, (size_t)arow[i] * K + k0 + k);
#endif
      }
      for (int j = 0; j < NVEC; ++j) {
#if SB
        bv[j] = VLOAD_L(Bs + k * NWG + (j * NDIMC + tx) * VW);
#else
        bv[j] = bmm_row_vector(B, k0 + k, N, bcol[j]);
#endif
      }
      for (int i = 0; i < MWI; ++i)
        for (int j = 0; j < NVEC; ++j)
          acc[i][j] = mad((floatv)(av[i]), bv[j], acc[i][j]);
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  for (int i = 0; i < MWI; ++i) {
    const int m = m0 + i * MDIMC + ty;
    if (m >= M) continue;
    __global real_t* crow = C + (size_t)m * N;
    for (int j = 0; j < NVEC; ++j) store_vector(crow, bcol[j], N, acc[i][j]);
  }
}
