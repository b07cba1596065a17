// Tunable strided copy of a box of up to 6 dims (op copy):
//   output[OO + sum_k ik*OSk] = input[IO + sum_k ik*ISk],  ik < Dk
// element by element, bit for bit (fp32 moved as uint, fp16 as ushort);
// output elements outside the box are not written. The box is read as
// rows of its last dim D5 (ROWS = D0*D1*D2*D3*D4 of them), each cut into
// VPR = ceil(D5 / VW) vectors; the shape is known at build time, so the
// row index is split into (i0, .., i4) by divisions by constants.
//
// Knobs (build-time defines, see copy_strided.toml):
//   WG   work-items per work-group (1-D)
//   VW   elements per vector along D5 (1, 2, 4, 8): a vector store, so
//        OS5 must be 1 when VW > 1; the load is a vector load when IS5 is
//        1, one element broadcast when IS5 is 0 (Expand), else a gather;
//        the last vector of a row stores its lanes one by one when VW
//        does not divide D5
//   EPW  vectors per work-item: work-group g covers vectors
//        g*WG*EPW .. (g+1)*WG*EPW - 1, work-item t those t + e*WG, so a
//        work-group's stores of one step are consecutive
// Shape defines (from the workload): COPY_D0..COPY_D5, COPY_IS0..COPY_IS5,
// COPY_IO, COPY_OS0..COPY_OS5, COPY_OO (prefixed, so that no build option
// renames an identifier of the compiler's own headers; read below without
// the prefix); DTYPE_FP16 picks the element size.
// Entry point: copy_strided(input, output). Every index fits an int (the
// template's workload checks).

#define D0 COPY_D0
#define D1 COPY_D1
#define D2 COPY_D2
#define D3 COPY_D3
#define D4 COPY_D4
#define D5 COPY_D5
#define IS0 COPY_IS0
#define IS1 COPY_IS1
#define IS2 COPY_IS2
#define IS3 COPY_IS3
#define IS4 COPY_IS4
#define IS5 COPY_IS5
#define IO COPY_IO
#define OS0 COPY_OS0
#define OS1 COPY_OS1
#define OS2 COPY_OS2
#define OS3 COPY_OS3
#define OS4 COPY_OS4
#define OS5 COPY_OS5
#define OO COPY_OO

// The element, moved as bits (a macro: vector types are named from it).
#if DTYPE_FP16
#define ELEM ushort
#else
#define ELEM uint
#endif
typedef ELEM elem_t;

#define COPY_CAT(a, b) COPY_CAT_(a, b)
#define COPY_CAT_(a, b) a##b

#define ROWS (D0 * D1 * D2 * D3 * D4)
#define VPR ((D5 + VW - 1) / VW)
#define NVEC (ROWS * VPR)

#if VW > 1
#if OS5 != 1
#error "VW > 1 needs OS5 == 1"
#endif
typedef COPY_CAT(ELEM, VW) elemv;
#define VLOAD(p) COPY_CAT(vload, VW)(0, (p))
#define VSTORE(v, p) COPY_CAT(vstore, VW)((v), 0, (p))

// VW elements of input from `in` on, IS5 apart.
inline elemv load_vector(const __global elem_t* input, int in) {
#if IS5 == 1
  return VLOAD(input + in);
#elif IS5 == 0
  return (elemv)(input[in]);
#else
  elem_t lanes[VW];
  for (int l = 0; l < VW; ++l) lanes[l] = input[in + l * IS5];
  return VLOAD(lanes);
#endif
}
#endif

// Row `row` (0 .. ROWS-1) of the box, elements c .. c+VW-1 of it.
inline void copy_vector(const __global elem_t* restrict input,
                        __global elem_t* restrict output, int row,
                        const int c) {
  int in = IO + c * IS5, out = OO + c * OS5;
  // Innermost first; a dim of extent 1 folds away.
#define SPLIT_DIM(D, IS, OS)         \
  {                                  \
    const int q = row / (D);         \
    const int i = row - q * (D);     \
    in += i * (IS);                  \
    out += i * (OS);                 \
    row = q;                         \
  }
  SPLIT_DIM(D4, IS4, OS4)
  SPLIT_DIM(D3, IS3, OS3)
  SPLIT_DIM(D2, IS2, OS2)
  SPLIT_DIM(D1, IS1, OS1)
#undef SPLIT_DIM
  in += row * IS0;
  out += row * OS0;
#if VW == 1
  output[out] = input[in];
#else
  if (c + VW <= D5) {
    VSTORE(load_vector(input, in), output + out);
  } else {
    for (int l = 0; l < D5 - c; ++l) output[out + l] = input[in + l * IS5];
  }
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void copy_strided(
    const __global elem_t* restrict input, __global elem_t* restrict output) {
  const int first = get_group_id(0) * (WG * EPW) + get_local_id(0);
  for (int e = 0; e < EPW; ++e) {
    const int v = first + e * WG;
    if (v >= NVEC) return;
    const int row = v / VPR;
    copy_vector(input, output, row, (v - row * VPR) * VW);
  }
}
