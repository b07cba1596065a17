// Tensor storage type of a template, chosen by DTYPE_FP16 (from the
// workload's dtype). fp16 tensors are stored as IEEE half and read and
// written with vload_half / vstore_half, which are core OpenCL 1.2 and need
// no cl_khr_fp16; arithmetic is in float. Scale and shift buffers of an
// epilogue are always float.
#ifndef DTYPE_FP16
#define DTYPE_FP16 0
#endif
#if DTYPE_FP16
typedef half real_t;
#define LOADF(p, i) vload_half((i), (p))
#define STOREF(v, p, i) vstore_half((v), (i), (p))
#else
typedef float real_t;
#define LOADF(p, i) ((p)[i])
#define STOREF(v, p, i) ((p)[i] = (v))
#endif
