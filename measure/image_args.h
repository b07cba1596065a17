// Kernel arguments that read a buffer as an image (v1::ImageArg): an
// image2d_t of RGBA float texels (CL_RGBA with CL_FLOAT, or CL_HALF_FLOAT
// for fp16 buffers) over a buffer of `rows` rows of `row_elements`
// elements, ceil(row_elements / 4) texels wide and `rows` high.
//
// An image is made in the first way that applies (ChooseImageMode):
// - a view of the buffer, no copy (clCreateImage with
//   cl_image_desc.buffer; cl_khr_image2d_from_buffer): the device lists
//   the extension, rows fill whole texels (row_elements % 4 == 0) and the
//   row pitch is a multiple of CL_DEVICE_IMAGE_PITCH_ALIGNMENT texels;
// - a copy: rows fill whole texels; clEnqueueCopyBufferToImage before each
//   launch;
// - a pack: image_pack.cl, one work-item per texel, zero in the lanes past
//   a row's end, before each launch.
// The copy or pack is the price of reading through the texture cache, so
// the measurer adds its device time to each launch (Measurement.pack_ns).
#ifndef TUNEFLEET_MEASURE_IMAGE_ARGS_H_
#define TUNEFLEET_MEASURE_IMAGE_ARGS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "opencl/opencl.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::measure {

enum class ImageMode { kView, kCopy, kPack };

// "view", "copy", "pack".
const char* ImageModeName(ImageMode mode);

// What the device offers for images (clGetDeviceInfo,
// clGetSupportedImageFormats).
struct ImageCaps {
  bool image_support = false;  // CL_DEVICE_IMAGE_SUPPORT
  uint64_t max_width = 0;      // CL_DEVICE_IMAGE2D_MAX_WIDTH, texels
  uint64_t max_height = 0;     // CL_DEVICE_IMAGE2D_MAX_HEIGHT, texels
  bool from_buffer = false;    // lists cl_khr_image2d_from_buffer
  // CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels; 0 where the driver states none.
  uint32_t pitch_alignment = 0;
  // CL_RGBA images of CL_FLOAT and CL_HALF_FLOAT that kernels may read and
  // write (CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D).
  bool rgba_float = false;
  bool rgba_half = false;
};

// The capabilities of `device` in `context`.
ImageCaps QueryImageCaps(cl_context context, cl_device_id device);

// Which image of a workload an argument reads; one image per key.
struct ImageKey {
  std::string buffer;
  uint64_t rows = 0;
  uint64_t row_elements = 0;

  friend bool operator<(const ImageKey& a, const ImageKey& b) {
    return std::tie(a.buffer, a.rows, a.row_elements) <
           std::tie(b.buffer, b.rows, b.row_elements);
  }
};

ImageKey KeyOf(const tunefleet::v1::ImageArg& arg);

// The image of an ImageArg over a buffer of its dtype.
struct ImageShape {
  uint64_t width = 0;   // texels: ceil(row_elements / 4)
  uint64_t height = 0;  // texels: rows
  uint64_t row_elements = 0;
  bool half = false;         // CL_HALF_FLOAT (fp16 buffer), else CL_FLOAT
  size_t element_bytes = 4;  // of the buffer: 4 or 2
  size_t texel_bytes() const { return 4 * element_bytes; }
  uint64_t bytes() const { return width * height * texel_bytes(); }
};

// The shape of `arg` over `buffer` (null: the request has no such buffer),
// checked against the buffer and the device. Errors: INVALID_ARGUMENT
// naming what is wrong: an unknown buffer, rows or row_elements of 0, more
// elements than the buffer has, no image support (CL_DEVICE_IMAGE_SUPPORT),
// a width or height over CL_DEVICE_IMAGE2D_MAX_WIDTH / _HEIGHT, a format
// the device lacks (clGetSupportedImageFormats).
absl::StatusOr<ImageShape> CheckImageArg(
    const tunefleet::v1::ImageArg& arg, const tunefleet::v1::BufferSpec* buffer,
    const ImageCaps& caps);

// The first way (see above) that applies to an image of `shape` on a device
// with `caps`.
ImageMode ChooseImageMode(const ImageShape& shape, const ImageCaps& caps);

// An image of a workload, kept beside its buffers.
struct WorkloadImage {
  opencl::ClMem image;
  ImageMode mode = ImageMode::kCopy;
  cl_mem buffer = nullptr;  // its source, owned by the workload's state
  ImageShape shape;
  // Device bytes the image holds beyond its buffer (0 for a view).
  uint64_t bytes() const {
    return mode == ImageMode::kView ? 0 : shape.bytes();
  }
};

// Makes the images of a device and the commands that refresh them from
// their buffers; owns the packing kernels (image_pack.cl, built on first
// use). Not thread-safe: owned by the measurement thread.
class ImageMaker {
 public:
  ImageMaker(cl_context context, cl_device_id device);

  const ImageCaps& caps() const { return caps_; }

  // The image of `arg` over `buffer` (its spec: `spec`). A view that the
  // driver refuses becomes a copy. Errors: CheckImageArg's; INTERNAL for a
  // failed OpenCL call.
  absl::StatusOr<WorkloadImage> Make(const tunefleet::v1::ImageArg& arg,
                                     const tunefleet::v1::BufferSpec& spec,
                                     cl_mem buffer);

  // Enqueues on `queue` the copy or pack that makes `image` from its buffer
  // (nothing for a view), appending its profiling event to `events` (may be
  // null). Errors: INTERNAL for a failed OpenCL call (a packing program
  // that does not build, say).
  absl::Status Refresh(cl_command_queue queue, const WorkloadImage& image,
                       std::vector<opencl::ClEvent>* events);

 private:
  absl::Status BuildPackKernels();

  cl_context context_;
  cl_device_id device_;
  ImageCaps caps_;
  opencl::ClProgram pack_program_;
  opencl::ClKernel pack_float_;
  opencl::ClKernel pack_half_;
};

}  // namespace tunefleet::measure

#endif  // TUNEFLEET_MEASURE_IMAGE_ARGS_H_
