#include "measure/image_args.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/enum_names.h"

namespace tunefleet::measure {

absl::string_view ImagePackSource();  // embedded image_pack.cl

namespace {

template <typename T>
T DeviceValue(cl_device_id device, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) !=
      CL_SUCCESS) {
    return T{};
  }
  return value;
}

cl_image_format Format(bool half) {
  return cl_image_format{
      CL_RGBA, static_cast<cl_channel_type>(half ? CL_HALF_FLOAT : CL_FLOAT)};
}

cl_image_desc Desc(const ImageShape& shape, size_t row_pitch, cl_mem buffer) {
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = shape.width;
  desc.image_height = shape.height;
  desc.image_row_pitch = row_pitch;
  desc.buffer = buffer;
  return desc;
}

}  // namespace

const char* ImageModeName(ImageMode mode) {
  constexpr base::EnumNames<ImageMode, 3> kNames{
      {{{ImageMode::kView, "view"},
        {ImageMode::kCopy, "copy"},
        {ImageMode::kPack, "pack"}}}};
  return kNames.Name(mode, "pack");
}

ImageCaps QueryImageCaps(cl_context context, cl_device_id device) {
  ImageCaps caps;
  caps.image_support =
      DeviceValue<cl_bool>(device, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE;
  if (!caps.image_support) return caps;
  caps.max_width = DeviceValue<size_t>(device, CL_DEVICE_IMAGE2D_MAX_WIDTH);
  caps.max_height = DeviceValue<size_t>(device, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
  for (absl::string_view ext :
       absl::StrSplit(opencl::DeviceString(device, CL_DEVICE_EXTENSIONS), ' ',
                      absl::SkipEmpty())) {
    caps.from_buffer = caps.from_buffer || ext == "cl_khr_image2d_from_buffer";
  }
  if (caps.from_buffer) {
    caps.pitch_alignment =
        DeviceValue<cl_uint>(device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT_KHR);
  }
  cl_uint count = 0;
  if (clGetSupportedImageFormats(context, CL_MEM_READ_WRITE,
                                 CL_MEM_OBJECT_IMAGE2D, 0, nullptr,
                                 &count) != CL_SUCCESS) {
    return caps;
  }
  std::vector<cl_image_format> formats(count);
  if (count == 0 || clGetSupportedImageFormats(
                        context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D,
                        count, formats.data(), nullptr) != CL_SUCCESS) {
    return caps;
  }
  for (const cl_image_format& f : formats) {
    if (f.image_channel_order != CL_RGBA) continue;
    caps.rgba_float = caps.rgba_float || f.image_channel_data_type == CL_FLOAT;
    caps.rgba_half =
        caps.rgba_half || f.image_channel_data_type == CL_HALF_FLOAT;
  }
  return caps;
}

ImageKey KeyOf(const tunefleet::v1::ImageArg& arg) {
  return ImageKey{arg.buffer(), arg.rows(), arg.row_elements()};
}

absl::StatusOr<ImageShape> CheckImageArg(
    const tunefleet::v1::ImageArg& arg, const tunefleet::v1::BufferSpec* buffer,
    const ImageCaps& caps) {
  if (buffer == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image argument names unknown buffer '", arg.buffer(), "'"));
  }
  const std::string what = absl::StrCat("image over buffer ", arg.buffer());
  if (arg.rows() == 0 || arg.row_elements() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rows (", arg.rows(), ") and row_elements (",
                     arg.row_elements(), ") must be at least 1"));
  }
  if (arg.rows() > buffer->elements() / arg.row_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", arg.rows(), " rows of ", arg.row_elements(),
                     " elements; the buffer has ", buffer->elements()));
  }
  ImageShape shape;
  shape.width = (arg.row_elements() + 3) / 4;
  shape.height = arg.rows();
  shape.row_elements = arg.row_elements();
  shape.half = buffer->dtype() == tunefleet::v1::DTYPE_FP16;
  shape.element_bytes = shape.half ? 2 : 4;
  if (!caps.image_support) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the device has no image support (CL_DEVICE_IMAGE_SUPPORT)"));
  }
  if (shape.width > caps.max_width) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", shape.width,
        " texels wide, over the device's CL_DEVICE_IMAGE2D_MAX_WIDTH of ",
        caps.max_width));
  }
  if (shape.height > caps.max_height) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", shape.height,
        " texels high, over the device's CL_DEVICE_IMAGE2D_MAX_HEIGHT of ",
        caps.max_height));
  }
  if (!(shape.half ? caps.rgba_half : caps.rgba_float)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the device has no CL_RGBA ",
                     shape.half ? "CL_HALF_FLOAT" : "CL_FLOAT",
                     " images (clGetSupportedImageFormats)"));
  }
  return shape;
}

ImageMode ChooseImageMode(const ImageShape& shape, const ImageCaps& caps) {
  if (shape.row_elements % 4 != 0) return ImageMode::kPack;
  const uint64_t row_pitch = shape.row_elements * shape.element_bytes;
  const uint64_t alignment =
      uint64_t{caps.pitch_alignment == 0 ? 1u : caps.pitch_alignment} *
      shape.texel_bytes();
  if (caps.from_buffer && row_pitch % alignment == 0) return ImageMode::kView;
  return ImageMode::kCopy;
}

ImageMaker::ImageMaker(cl_context context, cl_device_id device)
    : context_(context),
      device_(device),
      caps_(QueryImageCaps(context, device)) {}

absl::StatusOr<WorkloadImage> ImageMaker::Make(
    const tunefleet::v1::ImageArg& arg, const tunefleet::v1::BufferSpec& spec,
    cl_mem buffer) {
  absl::StatusOr<ImageShape> shape = CheckImageArg(arg, &spec, caps_);
  if (!shape.ok()) return shape.status();
  WorkloadImage out;
  out.mode = ChooseImageMode(*shape, caps_);
  out.buffer = buffer;
  out.shape = *shape;
  const cl_image_format format = Format(shape->half);
  cl_int err = CL_SUCCESS;
  if (out.mode == ImageMode::kView) {
    const cl_image_desc desc =
        Desc(*shape, shape->row_elements * shape->element_bytes, buffer);
    out.image = opencl::ClMem(clCreateImage(context_, CL_MEM_READ_ONLY, &format,
                                            &desc, nullptr, &err));
    if (err == CL_SUCCESS) return out;
    out.mode = ImageMode::kCopy;  // the driver refused the view
  }
  const cl_image_desc desc = Desc(*shape, 0, nullptr);
  out.image = opencl::ClMem(clCreateImage(
      context_,
      out.mode == ImageMode::kPack ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY,
      &format, &desc, nullptr, &err));
  if (err != CL_SUCCESS) {
    return opencl::ClError(
        absl::StrCat("clCreateImage(", shape->width, "x", shape->height,
                     ", over buffer ", arg.buffer(), ")"),
        err);
  }
  return out;
}

absl::Status ImageMaker::BuildPackKernels() {
  if (pack_float_) return absl::OkStatus();
  const std::string source(ImagePackSource());
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  opencl::ClProgram program(
      clCreateProgramWithSource(context_, 1, &text, &length, &err));
  if (err != CL_SUCCESS) return opencl::ClError("image packing program", err);
  err = clBuildProgram(program.get(), 1, &device_, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    return absl::InternalError(absl::StrCat(
        "building the image packing kernels: ", opencl::ClErrorName(err), "\n",
        opencl::BuildLog(program.get(), device_)));
  }
  opencl::ClKernel pack_float(
      clCreateKernel(program.get(), "tunefleet_pack_image_float", &err));
  if (err != CL_SUCCESS) return opencl::ClError("image packing kernel", err);
  opencl::ClKernel pack_half(
      clCreateKernel(program.get(), "tunefleet_pack_image_half", &err));
  if (err != CL_SUCCESS)
    return opencl::ClError("fp16 image packing kernel", err);
  pack_program_ = std::move(program);
  pack_float_ = std::move(pack_float);
  pack_half_ = std::move(pack_half);
  return absl::OkStatus();
}

absl::Status ImageMaker::Refresh(cl_command_queue queue,
                                 const WorkloadImage& image,
                                 std::vector<opencl::ClEvent>* events) {
  if (image.mode == ImageMode::kView) return absl::OkStatus();
  const ImageShape& shape = image.shape;
  cl_event raw = nullptr;
  cl_int err = CL_SUCCESS;
  if (image.mode == ImageMode::kCopy) {
    const size_t origin[3] = {0, 0, 0};
    const size_t region[3] = {shape.width, shape.height, 1};
    err = clEnqueueCopyBufferToImage(queue, image.buffer, image.image.get(), 0,
                                     origin, region, 0, nullptr, &raw);
    if (err != CL_SUCCESS)
      return opencl::ClError("clEnqueueCopyBufferToImage", err);
  } else {
    if (absl::Status s = BuildPackKernels(); !s.ok()) return s;
    cl_kernel kernel = shape.half ? pack_half_.get() : pack_float_.get();
    const cl_uint row_elements = static_cast<cl_uint>(shape.row_elements);
    const cl_uint width = static_cast<cl_uint>(shape.width);
    const cl_uint height = static_cast<cl_uint>(shape.height);
    cl_mem dst = image.image.get();
    const std::pair<size_t, const void*> args[] = {
        {sizeof(cl_mem), &image.buffer},
        {sizeof(cl_uint), &row_elements},
        {sizeof(cl_uint), &width},
        {sizeof(cl_uint), &height},
        {sizeof(cl_mem), &dst}};
    for (cl_uint i = 0; i < 5; ++i) {
      err = clSetKernelArg(kernel, i, args[i].first, args[i].second);
      if (err != CL_SUCCESS) {
        return opencl::ClError("image packing kernel arguments", err);
      }
    }
    const size_t global[2] = {shape.width, shape.height};
    err = clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, nullptr, 0,
                                 nullptr, &raw);
    if (err != CL_SUCCESS)
      return opencl::ClError("image packing kernel launch", err);
  }
  opencl::ClEvent event(raw);
  if (events != nullptr) events->push_back(std::move(event));
  return absl::OkStatus();
}

}  // namespace tunefleet::measure
