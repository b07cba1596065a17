// Tensor storage type of a template, chosen by DTYPE_FP16 (from the
// workload's dtype). fp16 tensors are stored as IEEE half and read and
// written with vload_half / vstore_half, which are core OpenCL 1.2 and need
// no cl_khr_fp16; arithmetic is in float unless HALF (below) says
// otherwise. Scale and shift buffers of an epilogue are always float.
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

// Arithmetic type (acc_t) of accumulators and products, chosen by HALF, a
// knob of the templates that offer it (gemm.cl, conv2d.cl, depthwise.cl):
//   HALF 0  float; LOADC(p, i) is LOADF(p, i), a value converted to float.
//   HALF 1  half (cl_khr_fp16): fp16 tensors are read as half with no
//           conversion and multiplied and summed in half; epilogues and
//           stores convert to float first. Needs fp16 storage and a device
//           that lists cl_khr_fp16 (the templates' constraints remove HALF=1
//           configs otherwise; a build without them stops at an #error).
// Local tiles of these templates hold acc_t.
#ifndef HALF
#define HALF 0
#endif
#if HALF
#if !DTYPE_FP16
#error "HALF=1 needs fp16 storage (DTYPE_FP16=1)"
#endif
#ifndef cl_khr_fp16
#error "HALF=1 needs a device that lists cl_khr_fp16"
#endif
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half acc_t;
#define LOADC(p, i) ((p)[i])
#else
typedef float acc_t;
#define LOADC(p, i) LOADF(p, i)
#endif
