// Packing a buffer into an RGBA float image (v1::ImageArg) where the image
// cannot be a view of the buffer or a plain copy of it: its rows do not fill
// whole texels (row_elements % 4 != 0). The buffer holds `height` rows of
// `row_elements` elements; texel (x, y) gets elements
// y * row_elements + 4x .. 4x+3, with 0 in the lanes past the row's end.
// One work-item per texel. write_imagef converts to the image's channel type
// (CL_FLOAT, or CL_HALF_FLOAT for fp16 buffers: OpenCL 1.2 section 6.12.14.4),
// so neither kernel needs cl_khr_fp16 (vload_half is core OpenCL 1.2).

__kernel void tunefleet_pack_image_float(__global const float* src,
                                         const uint row_elements,
                                         const uint width, const uint height,
                                         __write_only image2d_t dst) {
  const uint x = get_global_id(0);
  const uint y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const float* row = src + (size_t)y * row_elements;
  const uint e = 4 * x;
  float4 v = (float4)(0.0f);
  v.x = e < row_elements ? row[e] : 0.0f;
  v.y = e + 1 < row_elements ? row[e + 1] : 0.0f;
  v.z = e + 2 < row_elements ? row[e + 2] : 0.0f;
  v.w = e + 3 < row_elements ? row[e + 3] : 0.0f;
  write_imagef(dst, (int2)((int)x, (int)y), v);
}

__kernel void tunefleet_pack_image_half(__global const half* src,
                                        const uint row_elements,
                                        const uint width, const uint height,
                                        __write_only image2d_t dst) {
  const uint x = get_global_id(0);
  const uint y = get_global_id(1);
  if (x >= width || y >= height) return;
  const size_t row = (size_t)y * row_elements;
  const uint e = 4 * x;
  float4 v = (float4)(0.0f);
  v.x = e < row_elements ? vload_half(row + e, src) : 0.0f;
  v.y = e + 1 < row_elements ? vload_half(row + e + 1, src) : 0.0f;
  v.z = e + 2 < row_elements ? vload_half(row + e + 2, src) : 0.0f;
  v.w = e + 3 < row_elements ? vload_half(row + e + 3, src) : 0.0f;
  write_imagef(dst, (int2)((int)x, (int)y), v);
}
