// Packing a buffer into an RGBA float image (v1::ImageArg) where the image
// cannot be a view of the buffer or a plain copy of it: its rows do not fill
// whole texels (row_elements % 4 != 0). The buffer holds `height` rows of
// `row_elements` elements; texel (x, y) gets elements
// y * row_elements + 4x .. 4x+3, with 0 in the lanes past the row's end.
// One work-item per texel. write_imagef converts to the image's channel type
// (CL_FLOAT, or CL_HALF_FLOAT for fp16 buffers: OpenCL 1.2 section 6.12.14.4),
// so neither kernel needs cl_khr_fp16 (vload_half is core OpenCL 1.2).

// Element j of src, as a float: a float buffer's, or a half buffer's
// through vload_half.
#define TUNEFLEET_PACK_LOAD_FLOAT(src, j) (src)[j]
#define TUNEFLEET_PACK_LOAD_HALF(src, j) vload_half(j, src)

// The kernel `name` for buffers of `type`, reading elements with `load`.
#define TUNEFLEET_PACK_IMAGE_KERNEL(name, type, load)                      \
  __kernel void name(__global const type* src, const uint row_elements,   \
                     const uint width, const uint height,                 \
                     __write_only image2d_t dst) {                        \
    const uint x = get_global_id(0);                                      \
    const uint y = get_global_id(1);                                      \
    if (x >= width || y >= height) return;                                \
    const size_t row = (size_t)y * row_elements;                          \
    const uint e = 4 * x;                                                 \
    float4 v = (float4)(0.0f);                                            \
    v.x = e < row_elements ? load(src, row + e) : 0.0f;                   \
    v.y = e + 1 < row_elements ? load(src, row + e + 1) : 0.0f;           \
    v.z = e + 2 < row_elements ? load(src, row + e + 2) : 0.0f;           \
    v.w = e + 3 < row_elements ? load(src, row + e + 3) : 0.0f;           \
    write_imagef(dst, (int2)((int)x, (int)y), v);                         \
  }

TUNEFLEET_PACK_IMAGE_KERNEL(tunefleet_pack_image_float, float,
                            TUNEFLEET_PACK_LOAD_FLOAT)
TUNEFLEET_PACK_IMAGE_KERNEL(tunefleet_pack_image_half, half,
                            TUNEFLEET_PACK_LOAD_HALF)

#undef TUNEFLEET_PACK_IMAGE_KERNEL
#undef TUNEFLEET_PACK_LOAD_HALF
#undef TUNEFLEET_PACK_LOAD_FLOAT
