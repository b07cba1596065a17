// Reading a tensor through a read-only image2d_t, for templates whose image
// knob (IMB in gemm.cl, IMI in conv/direct_conv.cl) asks for it; the
// spec's [[images]] table has the agent make the image. Texel (x, y) of an
// image over a buffer with `row` elements per image row holds elements
// y * row + 4x .. 4x+3 as RGBA (lanes past the row's end read 0): CL_FLOAT
// for fp32 tensors, CL_HALF_FLOAT for fp16 ones (read_imagef returns floats
// for both; read_imageh halves, with cl_khr_fp16). On GPUs image reads go
// through the texture cache, which the mobile GPUs tunefleet targets
// (Adreno, Mali) favour over plain global loads.
// Compiled only when IMAGE_READS is 1 (a template's options set it from its
// image knob), so that devices without image support never see an image
// type. Needs common/dtype.cl before it (acc_t, HALF).
//   acc4                   four values of the arithmetic type acc_t
//   read_texel(img, x, y)  texel (x, y) as acc4; x and y must lie inside
//                          the image (the sampler does no addressing)
//   texel_lane(t, lane)    lane 0 .. 3 of a texel
#ifndef IMAGE_READS
#define IMAGE_READS 0
#endif
#if IMAGE_READS

#if HALF
typedef half4 acc4;
#else
typedef float4 acc4;
#endif

// Unnormalised integer coordinates, no addressing, no filtering: a read is
// one texel, as a buffer load is one element.
__constant sampler_t kTexelSampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;

inline acc4 read_texel(__read_only image2d_t img, int x, int y) {
#if HALF
  return read_imageh(img, kTexelSampler, (int2)(x, y));
#else
  return read_imagef(img, kTexelSampler, (int2)(x, y));
#endif
}

inline acc_t texel_lane(acc4 t, int lane) {
  return lane < 2 ? (lane == 0 ? t.s0 : t.s1) : (lane == 2 ? t.s2 : t.s3);
}

#endif  // IMAGE_READS
