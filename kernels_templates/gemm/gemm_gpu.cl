// SGEMM for big GPUs: C = A * B, all row-major, fp32, any M, N, K >= 1
// (vector loads need N % LOADV == 0 and K % LOADV == 0; the descriptor
// enforces it).
//
// Knobs (build-time defines, gemm_gpu.toml):
//   BM, BN  rows / columns of C per work-group (the block tile)
//   BK      depth of one K tile staged in local memory
//   TM, TN  rows / columns of C per work-item (the register tile, at most
//           128 accumulators: 16 x 8 fits NVIDIA's 255 registers unspilled)
//   LOADV   vector width of global loads of A (along K) and B (along N)
//   DB      1: double-buffered local tiles (the next tile is fetched into
//           registers while the current one is multiplied; one barrier
//           per K tile); 0: one buffer, two barriers per K tile
//   WTILE   1: the 32 work-items of a warp / sub-group cover an 8 x 4
//           patch of work-items (tx, ty) instead of 32 consecutive tx, so
//           that one k step reads 8 float4s of B and 4 of A from local
//           memory per warp: one shared-memory wavefront each on NVIDIA
//           GPUs (CUTLASS's warp tiles); 0: row-major work-item order
//   ASYNC   0: the portable path (DB picks one or two buffers); 2 or 3:
//           NVIDIA sm_80+ only, the B tile is copied global -> local with
//           asynchronous 16-byte copies (inline PTX cp.async.ca.shared.
//           global, commit_group / wait_group; PTX ISA 7.0) into ASYNC
//           local stages, ASYNC - 1 tiles in flight, one barrier per K
//           tile; A goes through registers one tile ahead and is stored
//           transposed (-DASYNC_A=1: A by 4-byte cp.async too, slower on
//           an H200). Needs LOADV == 4. Other compilers build DB instead.
//   KSPLIT  1: one work-group per C tile; 2 to 4: split-K, for shapes with
//           too few C tiles to fill the device (1024^3, M = 128): KSPLIT
//           work-groups per C tile each multiply a slice of K and store
//           their partial sums in scratch W (KSPLIT x M x N floats); the
//           one that counts the tile's last slice (atomic_inc on scratch S,
//           one int per C tile, zero-filled and left zero) adds the other
//           slices and writes C: one launch, no zeroed C, no spinning
//           (CUTLASS's split-K "serial reduction" reorganised so that no
//           work-group waits for another).
//   STRN    1: a work-item's TN columns are float4 chunks strided by TX*4
//           (tx*4 + c*TX*4: conflict-free float4 reads of the B tile and
//           coalesced stores of C, as CLBlast's STRN); 0: TN contiguous
//           columns from tx*TN
// Shape class defines (host-computed): EDGE_M, EDGE_N, EDGE_K are 1 when M,
// N, K are not multiples of BM, BN, BK; out-of-range rows and columns read
// clamped indices and are never stored, K past the end reads zeros.
//
// The design follows the well-known register-blocked SGEMM for NVIDIA GPUs
// (Volkov & Demmel, SC'08; CUTLASS's SIMT GEMM; CLBlast's Xgemm): work-item
// (tx, ty) owns the TM x TN block of C at rows ty*TM.. and the columns
// STRN picks;
// A is staged transposed (As[k][m], padded by 4 floats a row against bank
// conflicts) so that both operands of the inner product are read from
// local memory as float4s.

#define TX (BN / TN)
#define TY (BM / TM)
#define NT (TX * TY)
#define AS_STRIDE (BM + 4)
#define A_PER (BM * BK / LOADV / NT)  // A vectors each work-item fetches
#ifndef STRN
#define STRN 0
#endif
#ifndef WTILE
#define WTILE 0
#endif
// Column (within the block tile) of a work-item's j-th column.
#if STRN
#define TILE_COL(tx, j) (((j) / 4) * TX * 4 + (tx) * 4 + ((j) % 4))
#else
#define TILE_COL(tx, j) ((tx) * TN + (j))
#endif
#define B_PER (BK * BN / LOADV / NT)  // B vectors each work-item fetches
#ifndef ASYNC
#define ASYNC 0
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
// ASYNC is compiled only by NVIDIA's OpenCL compiler (it defines the
// extension macro cl_nv_pragma_unroll): elsewhere (PoCL, other vendors) an
// ASYNC config builds the portable DB path instead, so it stays valid.
#if ASYNC && !defined(cl_nv_pragma_unroll)
#undef ASYNC
#define ASYNC 0
#endif
#if ASYNC
#if ASYNC < 2 || ASYNC > 4 || LOADV != 4
#error "ASYNC is the number of local tile stages (2..4) and needs LOADV == 4"
#endif
#define STAGES ASYNC
// ASYNC_A 1: A is copied asynchronously too (4-byte copies, transposed on
// the way); 0: A goes through registers one tile ahead (as DB), B alone
// asynchronously.
#ifndef ASYNC_A
#define ASYNC_A 0
#endif
#else
#define STAGES (DB + 1)
#endif
// Whether B goes through registers (fetch_tile / store_tile).
#define REG_B (!ASYNC || ASYNC_A)

// Vector accesses go through vector-typed pointers, not vloadn/vstoren:
// OpenCL C aligns a floatn to its size (OpenCL C 1.2, 6.1.5), so the
// compiler may emit one 8- or 16-byte access (ld.shared.v4 on NVIDIA);
// vloadn only promises 4-byte alignment and may become n scalar accesses.
// Every offset below is a multiple of the vector width (the descriptor's
// constraints: N, K, BK, BN % LOADV == 0; BM, TM, TN % 4 == 0 where read as
// float4).
#if LOADV == 4
typedef float4 vec_t;
#define VZERO ((float4)(0.0f))
#elif LOADV == 2
typedef float2 vec_t;
#define VZERO ((float2)(0.0f))
#else
typedef float vec_t;
#define VZERO 0.0f
#endif
#define VLOAD(p) (*(const __global vec_t*)(p))
#define VSTORE_L(v, p) (*(__local vec_t*)(p) = (v))
#define LOCAL4(p) (*(const __local float4*)(p))


// Fetches the K tile starting at k0 from global memory into registers.
inline void fetch_tile(const __global float* restrict A,
                       const __global float* restrict B, int M, int N, int K,
                       int m0, int n0, int k0, int tid, vec_t* ra,
                       vec_t* rb) {
#pragma unroll
  for (int s = 0; s < A_PER; ++s) {
    const int v = tid + s * NT;
    int row = m0 + v / (BK / LOADV);
    const int k = k0 + (v % (BK / LOADV)) * LOADV;
#if EDGE_M
    row = min(row, M - 1);
#endif
#if EDGE_K
    ra[s] = k < K ? VLOAD(A + (size_t)row * K + k) : VZERO;
#else
    ra[s] = VLOAD(A + (size_t)row * K + k);
#endif
  }
#if REG_B
#pragma unroll
  for (int s = 0; s < B_PER; ++s) {
    const int v = tid + s * NT;
    const int k = k0 + v / (BN / LOADV);
    int col = n0 + (v % (BN / LOADV)) * LOADV;
#if EDGE_N
    col = min(col, N - LOADV);
#endif
#if EDGE_K
    rb[s] = k < K ? VLOAD(B + (size_t)k * N + col) : VZERO;
#else
    rb[s] = VLOAD(B + (size_t)k * N + col);
#endif
  }
#endif  // REG_B
}

// Writes fetched registers into one local buffer: A transposed, B as is.
inline void store_tile(__local float* as, __local float* bs, int tid,
                       const vec_t* ra, const vec_t* rb) {
#pragma unroll
  for (int s = 0; s < A_PER; ++s) {
    const int v = tid + s * NT;
    const int row = v / (BK / LOADV);
    const int k = (v % (BK / LOADV)) * LOADV;
    __local float* dst = as + k * AS_STRIDE + row;
#if LOADV == 4
    dst[0] = ra[s].s0;
    dst[AS_STRIDE] = ra[s].s1;
    dst[2 * AS_STRIDE] = ra[s].s2;
    dst[3 * AS_STRIDE] = ra[s].s3;
#elif LOADV == 2
    dst[0] = ra[s].s0;
    dst[AS_STRIDE] = ra[s].s1;
#else
    dst[0] = ra[s];
#endif
  }
#if REG_B
#pragma unroll
  for (int s = 0; s < B_PER; ++s) {
    const int v = tid + s * NT;
    const int k = v / (BN / LOADV);
    const int col = (v % (BN / LOADV)) * LOADV;
    VSTORE_L(rb[s], bs + k * BN + col);
  }
#endif  // REG_B
}

#if ASYNC
// Asynchronous global -> local copies (PTX ISA 7.0+, sm_80+: cp.async,
// cp.async.commit_group, cp.async.wait_group). The copies bypass
// registers; a work-item waits for its own groups, and the barrier that
// follows makes every work-item's copies visible to the work-group.
// Local addresses are passed as 32-bit shared-window offsets (the value
// of a __local pointer), global ones as 64-bit addresses.
#define CP_ASYNC(dst, src, bytes)                                       \
  asm volatile("cp.async.ca.shared.global [%0], [%1], " #bytes ";" ::  \
                   "r"((uint)(size_t)(dst)),                           \
               "l"((ulong)(size_t)(src)))
// src_bytes < bytes fills the rest of the destination with zeros.
#define CP_ASYNC_ZFILL(dst, src, bytes, src_bytes)                       \
  asm volatile("cp.async.ca.shared.global [%0], [%1], " #bytes ", %2;" :: \
                   "r"((uint)(size_t)(dst)),                             \
               "l"((ulong)(size_t)(src)), "r"(src_bytes))
#define CP_ASYNC_COMMIT() asm volatile("cp.async.commit_group;" ::)
#define CP_ASYNC_WAIT(n) asm volatile("cp.async.wait_group " #n ";" ::)
#define CP_ASYNC_WAIT_N(n) CP_ASYNC_WAIT(n)

// Starts the copies of the K tile at k0 into one stage of the local tiles:
// A transposed with 4-byte copies (As[k][m]), B as is with 16-byte ones.
inline void issue_tile(const __global float* restrict A,
                       const __global float* restrict B, int M, int N, int K,
                       int m0, int n0, int k0, int tid, __local float* as,
                       __local float* bs) {
#if ASYNC_A
#pragma unroll
  for (int s = 0; s < A_PER; ++s) {
    const int v = tid + s * NT;
    const int r = v / (BK / 4);
    const int kk = (v % (BK / 4)) * 4;
    int row = m0 + r;
#if EDGE_M
    row = min(row, M - 1);
#endif
    const __global float* src = A + (size_t)row * K + k0 + kk;
    __local float* dst = as + kk * AS_STRIDE + r;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
#if EDGE_K
      const int in = k0 + kk + c < K;
      CP_ASYNC_ZFILL(dst + c * AS_STRIDE, in ? src + c : A, 4, in ? 4 : 0);
#else
      CP_ASYNC(dst + c * AS_STRIDE, src + c, 4);
#endif
    }
  }
#endif  // ASYNC_A
#pragma unroll
  for (int s = 0; s < B_PER; ++s) {
    const int v = tid + s * NT;
    const int kk = v / (BN / 4);
    const int cc = (v % (BN / 4)) * 4;
    int col = n0 + cc;
#if EDGE_N
    col = min(col, N - 4);
#endif
    __local float* dst = bs + kk * BN + cc;
#if EDGE_K
    const int in = k0 + kk < K;
    CP_ASYNC_ZFILL(dst, in ? B + (size_t)(k0 + kk) * N + col : B, 16,
                   in ? 16 : 0);
#else
    CP_ASYNC(dst, B + (size_t)(k0 + kk) * N + col, 16);
#endif
  }
}
#endif  // ASYNC

// Reads n (1, 2, 4 or 8) consecutive floats of local memory.
#define READ_LOCAL(dst, src, n)                                  \
  do {                                                           \
    if ((n) >= 4) {                                              \
      _Pragma("unroll") for (int q = 0; q < (n); q += 4) {       \
        const float4 t4 = LOCAL4((src) + q);                     \
        dst[q] = t4.s0;                                          \
        dst[q + 1] = t4.s1;                                      \
        dst[q + 2] = t4.s2;                                      \
        dst[q + 3] = t4.s3;                                      \
      }                                                          \
    } else {                                                     \
      _Pragma("unroll") for (int q = 0; q < (n); ++q) dst[q] = (src)[q]; \
    }                                                            \
  } while (0)

// Stores a work-item's register tile (rows row0.., its TILE_COL columns
// from n0) into the row-major M x N matrix at dst; out-of-range elements
// are skipped.
#define store_acc(dst, M, N, row0, n0, tx, acc)                          \
  do {                                                                  \
    _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {                 \
      __global float* c_ = (dst) + (size_t)((row0) + i_) * (N) + (n0);  \
      STORE_ROW(c_, M, N, row0, n0, tx, acc, i_);                       \
    }                                                                   \
  } while (0)
#if EDGE_M || EDGE_N || TN < 4
#define STORE_ROW(c_, M, N, row0, n0, tx, acc, i_)                  \
  _Pragma("unroll") for (int j_ = 0; j_ < TN; ++j_) {               \
    const int col_ = TILE_COL(tx, j_);                              \
    if ((row0) + i_ < (M) && (n0) + col_ < (N)) c_[col_] = acc[i_][j_]; \
  }
#else
#define STORE_ROW(c_, M, N, row0, n0, tx, acc, i_)                       \
  _Pragma("unroll") for (int j_ = 0; j_ < TN; j_ += 4) {                \
    *(__global float4*)(c_ + TILE_COL(tx, j_)) = (float4)(               \
        acc[i_][j_], acc[i_][j_ + 1], acc[i_][j_ + 2], acc[i_][j_ + 3]); \
  }
#endif

__kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void gemm_gpu(
    const int M, const int N, const int K, const __global float* restrict A,
    const __global float* restrict B, __global float* restrict C,
    __global float* W, __global int* S) {
  __local float As[STAGES * BK * AS_STRIDE] __attribute__((aligned(16)));
  __local float Bs[STAGES * BK * BN] __attribute__((aligned(16)));
#if KSPLIT > 1
  __local int last_slice;
  // Work-group rows are (slice, block row) pairs, the slice outermost;
  // each slice multiplies ceil(K / BK / KSPLIT) K tiles, the last one the
  // rest (K % BK == 0, and every slice has a tile: the descriptor's
  // constraints).
  const int groups_m = (M + BM - 1) / BM;
  const int split = get_group_id(1) / groups_m;
  const int gm = get_group_id(1) % groups_m;
  const int per_slice = (K / BK + KSPLIT - 1) / KSPLIT;
  const int kbase = split * per_slice * BK;
  const int tiles = min(per_slice, K / BK - split * per_slice);
#else
  const int gm = get_group_id(1);
  const int kbase = 0;
  const int tiles = (K + BK - 1) / BK;
#endif
  const int tid = get_local_id(1) * TX + get_local_id(0);
#if WTILE
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int tx = (warp % (TX / 8)) * 8 + lane % 8;
  const int ty = (warp / (TX / 8)) * 4 + lane / 8;
#else
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
#endif
  const int m0 = gm * BM;
  const int n0 = get_group_id(0) * BN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

#if ASYNC
#if !ASYNC_A
  vec_t ra[A_PER];
  vec_t rb[1];
#endif
  // STAGES - 1 tiles in flight before the first is used; one group is
  // committed per tile (empty past the end) so that wait_group counts
  // tiles.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) {
      issue_tile(A, B, M, N, K, m0, n0, kbase + s * BK, tid, As + s * BK * AS_STRIDE,
                 Bs + s * BK * BN);
#if !ASYNC_A
      fetch_tile(A, B, M, N, K, m0, n0, kbase + s * BK, tid, ra, rb);
      store_tile(As + s * BK * AS_STRIDE, 0, tid, ra, rb);
#endif
    }
    CP_ASYNC_COMMIT();
  }
  int cur = 0;
  for (int t = 0; t < tiles; ++t) {
    CP_ASYNC_WAIT_N(STAGES - 2);  // this work-item's copies of tile t
    // All copies of tile t are visible, and every work-item is done with
    // tile t - 1, whose stage the next issue overwrites.
    barrier(CLK_LOCAL_MEM_FENCE);
    {
      const int next = t + STAGES - 1;
      const int st = cur == 0 ? STAGES - 1 : cur - 1;
      if (next < tiles) {
        issue_tile(A, B, M, N, K, m0, n0, kbase + next * BK, tid,
                   As + st * BK * AS_STRIDE, Bs + st * BK * BN);
#if !ASYNC_A
        fetch_tile(A, B, M, N, K, m0, n0, kbase + next * BK, tid, ra, rb);
#endif
      }
      CP_ASYNC_COMMIT();
    }
#if !ASYNC_A
    const int a_stage = cur == 0 ? STAGES - 1 : cur - 1;
#endif
#else
  vec_t ra[A_PER];
  vec_t rb[B_PER];
  fetch_tile(A, B, M, N, K, m0, n0, kbase, tid, ra, rb);
  store_tile(As, Bs, tid, ra, rb);
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int t = 0; t < tiles; ++t) {
#if DB
    const int cur = t & 1;
    // The next tile travels from global memory while this one is used.
    if (t + 1 < tiles) {
      fetch_tile(A, B, M, N, K, m0, n0, kbase + (t + 1) * BK, tid, ra, rb);
    }
#else
    const int cur = 0;
#endif
#endif  // ASYNC
    const __local float* as = As + cur * BK * AS_STRIDE + ty * TM;
    const __local float* bs = Bs + cur * BK * BN + TILE_COL(tx, 0);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      READ_LOCAL(a, as + k * AS_STRIDE, TM);
#if STRN
#pragma unroll
      for (int c = 0; c < TN / 4; ++c) {
        const float4 t4 = LOCAL4(bs + k * BN + c * TX * 4);
        b[4 * c] = t4.s0;
        b[4 * c + 1] = t4.s1;
        b[4 * c + 2] = t4.s2;
        b[4 * c + 3] = t4.s3;
      }
#else
      READ_LOCAL(b, bs + k * BN, TN);
#endif
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = mad(a[i], b[j], acc[i][j]);
    }
#if ASYNC
#if !ASYNC_A
    // Tile t + STAGES - 1's A, read by no work-item before the next barrier.
    if (t + STAGES - 1 < tiles) {
      store_tile(As + a_stage * BK * AS_STRIDE, 0, tid, ra, rb);
    }
#endif
    cur = cur == STAGES - 1 ? 0 : cur + 1;
#elif DB
    if (t + 1 < tiles) {
      store_tile(As + (cur ^ 1) * BK * AS_STRIDE, Bs + (cur ^ 1) * BK * BN,
                 tid, ra, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + 1 < tiles) {
      fetch_tile(A, B, M, N, K, m0, n0, kbase + (t + 1) * BK, tid, ra, rb);
      store_tile(As, Bs, tid, ra, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  const int row0 = m0 + ty * TM;
#if KSPLIT > 1
  // This slice's partial sums go to its slot of W; the work-group that
  // counts the tile's last slice adds the other slots and writes C.
  store_acc(W + (size_t)split * M * N, M, N, row0, n0, tx, acc);
  // Release: the partial sums are visible device-wide before the count.
  mem_fence(CLK_GLOBAL_MEM_FENCE);
#ifdef cl_nv_pragma_unroll
  asm volatile("membar.gl;" ::: "memory");
#endif
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (tid == 0) {
    const int tile = gm * (int)get_num_groups(0) + (int)get_group_id(0);
    last_slice = atomic_inc(S + tile) == KSPLIT - 1;
    // Counters start at zero (fill = "zero") and end there for the next
    // launch.
    if (last_slice) atomic_xchg(S + tile, 0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!last_slice) return;
  // Acquire: the other slices' sums, read past any cache of this one.
  mem_fence(CLK_GLOBAL_MEM_FENCE);
#ifdef cl_nv_pragma_unroll
  asm volatile("membar.gl;" ::: "memory");
#endif
#pragma unroll
  for (int s = 0; s < KSPLIT; ++s) {
    if (s == split) continue;
    const volatile __global float* w = W + (size_t)s * M * N;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int row = EDGE_M ? min(row0 + i, M - 1) : row0 + i;
#if EDGE_M || EDGE_N || TN < 4
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        int col = n0 + TILE_COL(tx, j);
#if EDGE_N
        col = min(col, N - 1);
#endif
        acc[i][j] += w[(size_t)row * N + col];
      }
#else
      // Whole float4s, as STORE_ROW wrote them.
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 p = *(const volatile __global float4*)(
            w + (size_t)row * N + n0 + TILE_COL(tx, j));
        acc[i][j] += p.s0;
        acc[i][j + 1] += p.s1;
        acc[i][j + 2] += p.s2;
        acc[i][j + 3] += p.s3;
      }
#endif
    }
  }
#endif  // KSPLIT > 1
  store_acc(C, M, N, row0, n0, tx, acc);
}
