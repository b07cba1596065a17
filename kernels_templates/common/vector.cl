// Vectors of VW floats along a kernel's contiguous axis, for templates with
// a VW knob (1, 2, 4 or 8; a kernel that takes fewer says so with its own
// #error). Needs common/dtype.cl before it (LOADF, STOREF, real_t, acc_t).
//   floatv             VW floats (a float when VW is 1)
//   VLOAD_L(p)         VW values of __local (or private) memory at p, of its
//                      element type (float, or acc_t for local tiles)
//   VLOAD_G(p)         VW values of a tensor of the storage type at p
//   VSTORE_G(v, p)     stores a floatv to a tensor of the storage type at p
//   GATHER(AT)         a floatv of AT(0) .. AT(VW-1), AT a per-lane macro
// and the same in the arithmetic type acc_t (common/dtype.cl, HALF):
//   accv               VW values of acc_t (floatv when HALF is 0)
//   CLOAD_G(p)         VW values of a tensor of the storage type at p, as accv
//   CGATHER(AT)        an accv of AT(0) .. AT(VW-1)
//   TO_FLOATV(v)       an accv as a floatv (for epilogues and stores)
//   element(v, i)      lane i of a floatv
//   max_lanes(v), sum_lanes(v)  the largest lane, the sum of the lanes
//   store_vector(row, q, Q, v)  stores the lanes of v that fall before Q
// Every load and store needs only the element alignment OpenCL asks for.

#define TF_CAT(a, b) TF_CAT_(a, b)
#define TF_CAT_(a, b) a##b

// PoCL 3.1 (x86) compiles vload_half8 / vstore_half8 into aligned 16-byte
// moves (vmovdqa) that fault on addresses that are not 16-byte aligned,
// though OpenCL only asks for 2-byte alignment: eight halves are moved as
// two vload_half4 / vstore_half4 instead.
#define VLOAD_HALF8(p) \
  ((float8)(vload_half4(0, (p)), vload_half4(0, (p) + 4)))
#define VSTORE_HALF8(v, p) \
  (vstore_half4((v).lo, 0, (p)), vstore_half4((v).hi, 0, (p) + 4))

#if VW == 1
typedef float floatv;
#define VLOAD_L(p) (*(p))
#elif VW == 2 || VW == 4 || VW == 8
typedef TF_CAT(float, VW) floatv;
#define VLOAD_L(p) TF_CAT(vload, VW)(0, (p))
#else
#error "VW must be 1, 2, 4 or 8"
#endif

#if VW == 1
#define VLOAD_G(p) LOADF((p), 0)
#define VSTORE_G(v, p) STOREF((v), (p), 0)
#elif DTYPE_FP16 && VW == 8
#define VLOAD_G(p) VLOAD_HALF8(p)
#define VSTORE_G(v, p) VSTORE_HALF8((v), (p))
#elif DTYPE_FP16
#define VLOAD_G(p) TF_CAT(vload_half, VW)(0, (p))
#define VSTORE_G(v, p) TF_CAT(vstore_half, VW)((v), 0, (p))
#else
#define VLOAD_G(p) TF_CAT(vload, VW)(0, (p))
#define VSTORE_G(v, p) TF_CAT(vstore, VW)((v), 0, (p))
#endif

// A vector of type T (VW lanes) of AT(0) .. AT(VW-1).
#if VW == 1
#define VECTOR_OF(T, AT) ((T)(AT(0)))
#elif VW == 2
#define VECTOR_OF(T, AT) ((T)(AT(0), AT(1)))
#elif VW == 4
#define VECTOR_OF(T, AT) ((T)(AT(0), AT(1), AT(2), AT(3)))
#else
#define VECTOR_OF(T, AT) \
  ((T)(AT(0), AT(1), AT(2), AT(3), AT(4), AT(5), AT(6), AT(7)))
#endif
#define GATHER(AT) VECTOR_OF(floatv, AT)
#define CGATHER(AT) VECTOR_OF(accv, AT)

// The arithmetic type's vectors. With HALF the tensors are half and read
// directly (cl_khr_fp16); eight halves move as two vload4, as above.
#if !HALF
typedef floatv accv;
#define CLOAD_G(p) VLOAD_G(p)
#define TO_FLOATV(v) (v)
#elif VW == 1
typedef half accv;
#define CLOAD_G(p) (*(p))
#define TO_FLOATV(v) ((float)(v))
#else
typedef TF_CAT(half, VW) accv;
#if VW == 8
#define CLOAD_G(p) ((half8)(vload4(0, (p)), vload4(0, (p) + 4)))
#else
#define CLOAD_G(p) TF_CAT(vload, VW)(0, (p))
#endif
#define TO_FLOATV(v) TF_CAT(convert_float, VW)(v)
#endif

// Lane i of a vector, without taking its address (private arrays of
// vectors trip some compilers when work-groups are large).
inline float element(floatv v, int i) {
#if VW == 1
  return v;
#elif VW == 2
  return i == 0 ? v.s0 : v.s1;
#elif VW == 4
  return i < 2 ? (i == 0 ? v.s0 : v.s1) : (i == 2 ? v.s2 : v.s3);
#else
  const float4 quad = i < 4 ? v.lo : v.hi;
  const int j = i & 3;
  return j < 2 ? (j == 0 ? quad.s0 : quad.s1) : (j == 2 ? quad.s2 : quad.s3);
#endif
}

// Largest lane.
inline float max_lanes(floatv v) {
#if VW == 1
  return v;
#elif VW == 2
  return fmax(v.s0, v.s1);
#elif VW == 4
  return fmax(fmax(v.s0, v.s1), fmax(v.s2, v.s3));
#else
  const float4 h = fmax(v.lo, v.hi);
  return fmax(fmax(h.s0, h.s1), fmax(h.s2, h.s3));
#endif
}

// Sum of the lanes.
inline float sum_lanes(floatv v) {
#if VW == 1
  return v;
#elif VW == 2
  return v.s0 + v.s1;
#elif VW == 4
  return (v.s0 + v.s1) + (v.s2 + v.s3);
#else
  const float4 h = v.lo + v.hi;
  return (h.s0 + h.s1) + (h.s2 + h.s3);
#endif
}

// Stores the VW lanes of v to row[q] .. row[q+VW-1] of a row of Q
// elements; lanes at Q or past it are dropped.
inline void store_vector(__global real_t* row, int q, int Q, floatv v) {
  if (q + VW <= Q) {
    VSTORE_G(v, row + q);
    return;
  }
  for (int lane = 0; lane < VW; ++lane) {
    if (q + lane < Q) STOREF(element(v, lane), row, q + lane);
  }
}
