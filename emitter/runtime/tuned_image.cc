// Images of image arguments ('m' in tuned_table.h): a caller's buffer read
// by a kernel as an image2d_t of RGBA texels, made as tunefleet's agent
// made it when it measured the kernel (measure/image_args.h in
// tunefleet): a view of the buffer where the device lists
// cl_khr_image2d_from_buffer and the row pitch meets its alignment, else a
// copy when rows fill whole texels, else the packing kernel
// (tuned_image_pack.h, tunefleet's image_pack.cl).
#include <cstring>
#include <string>

#include "tuned_image_pack.h"
#include "tuned_runtime.h"

namespace tunefleet_tuned::internal {
namespace {

// Whether the buffer's rows can be the image's rows in place.
bool CanView(cl_device_id device, size_t row_bytes, size_t texel_bytes) {
  const DeviceFeatures f = FeaturesOf(device);
  return f.image2d_from_buffer &&
         (f.pitch_alignment == 0 ||
          row_bytes % (f.pitch_alignment * texel_bytes) == 0);
}

// Enqueues the packing kernel from `buffer` into `image`.
cl_int Pack(cl_command_queue queue, cl_context context, cl_device_id device,
            cl_mem buffer, cl_mem image, cl_uint row_elements, cl_uint width,
            cl_uint height, bool fp16, cl_uint num_wait, const cl_event* wait,
            cl_event* done) {
  cl_program program = nullptr;
  cl_int err =
      GetProgram(context, device, kImagePackSource, std::string(), &program);
  if (err != CL_SUCCESS) return err;
  cl_kernel kernel = clCreateKernel(
      program,
      fp16 ? "tunefleet_pack_image_half" : "tunefleet_pack_image_float", &err);
  if (err != CL_SUCCESS) return err;
  err = clSetKernelArg(kernel, 0, sizeof(cl_mem), &buffer);
  if (err == CL_SUCCESS) {
    err = clSetKernelArg(kernel, 1, sizeof(cl_uint), &row_elements);
  }
  if (err == CL_SUCCESS)
    err = clSetKernelArg(kernel, 2, sizeof(cl_uint), &width);
  if (err == CL_SUCCESS) {
    err = clSetKernelArg(kernel, 3, sizeof(cl_uint), &height);
  }
  if (err == CL_SUCCESS)
    err = clSetKernelArg(kernel, 4, sizeof(cl_mem), &image);
  if (err == CL_SUCCESS) {
    const size_t global[2] = {width, height};
    err = clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, nullptr,
                                 num_wait, wait, done);
  }
  clReleaseKernel(kernel);
  return err;
}

}  // namespace

cl_int MakeImage(cl_command_queue queue, cl_mem buffer, size_t rows,
                 size_t row_elements, bool fp16, cl_uint num_wait,
                 const cl_event* wait, cl_mem* image, cl_event* ready) {
  *image = nullptr;
  *ready = nullptr;
  if (rows == 0 || row_elements == 0) return CL_INVALID_VALUE;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err == CL_SUCCESS) {
    err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context),
                                &context, nullptr);
  }
  if (err != CL_SUCCESS) return err;
  const size_t element_bytes = fp16 ? 2 : 4;
  const size_t width = (row_elements + 3) / 4;
  const bool whole_texels = row_elements % 4 == 0;
  const cl_image_format format = {
      CL_RGBA, static_cast<cl_channel_type>(fp16 ? CL_HALF_FLOAT : CL_FLOAT)};
  cl_image_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width;
  desc.image_height = rows;
  if (whole_texels &&
      CanView(device, row_elements * element_bytes, 4 * element_bytes)) {
    desc.image_row_pitch = row_elements * element_bytes;
    desc.buffer = buffer;
    *image =
        clCreateImage(context, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err);
    if (err != CL_SUCCESS) return err;
    // Nothing to wait for but what the caller waits for.
    return num_wait == 0
               ? CL_SUCCESS
               : clEnqueueMarkerWithWaitList(queue, num_wait, wait, ready);
  }
  *image =
      clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  if (err != CL_SUCCESS) return err;
  if (whole_texels) {
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {width, rows, 1};
    err = clEnqueueCopyBufferToImage(queue, buffer, *image, 0, origin, region,
                                     num_wait, wait, ready);
  } else {
    err = Pack(queue, context, device, buffer, *image,
               static_cast<cl_uint>(row_elements), static_cast<cl_uint>(width),
               static_cast<cl_uint>(rows), fp16, num_wait, wait, ready);
  }
  if (err != CL_SUCCESS) {
    clReleaseMemObject(*image);
    *image = nullptr;
  }
  return err;
}

}  // namespace tunefleet_tuned::internal
