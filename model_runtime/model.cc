// The model runtime (tunefleet_model.h): Load turns a plan into device
// memory, programs and kernels with their arguments set; Run only
// enqueues.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "cl_objects.h"
#include "memory_plan.h"
#include "recording.h"
#include "tunefleet_model.h"

namespace tunefleet_tuned {
namespace {

using internal::DeviceText;
using internal::Kernel;
using internal::Mem;
using internal::Program;

cl_int Fail(cl_int code, const std::string& message, std::string* error) {
  if (error != nullptr) *error = message;
  return code;
}

std::string ClCode(cl_int code) {
  return "OpenCL error " + std::to_string(code);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string BuildLogOf(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                            &size) != CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0],
                        nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  constexpr size_t kMaxLog = 2000;
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n[log cut]";
  return log;
}

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// What a device offers for reading a buffer's memory as an image2d_t
// (cl_khr_image2d_from_buffer; OpenCL 3.0 spec, section 5.3.1.2).
struct ImageViewCaps {
  bool from_buffer = false;     // lists cl_khr_image2d_from_buffer
  cl_uint pitch_alignment = 0;  // CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels
};

ImageViewCaps QueryImageViewCaps(cl_device_id device, bool assume_extension) {
  ImageViewCaps caps;
  std::istringstream extensions(DeviceText(device, CL_DEVICE_EXTENSIONS));
  for (std::string name; extensions >> name;) {
    caps.from_buffer = caps.from_buffer || name == "cl_khr_image2d_from_buffer";
  }
  caps.from_buffer = caps.from_buffer || assume_extension;
  // CL_DEVICE_IMAGE_PITCH_ALIGNMENT(_KHR): 0x104A in cl_ext.h and cl.h.
  constexpr cl_device_info kPitchAlignment = 0x104A;
  if (caps.from_buffer &&
      clGetDeviceInfo(device, kPitchAlignment, sizeof(caps.pitch_alignment),
                      &caps.pitch_alignment, nullptr) != CL_SUCCESS) {
    caps.pitch_alignment = 0;
  }
  return caps;
}

// Whether an image of rows of `row_elements` fp32 values may view its
// buffer: the extension, whole texels per row, and a row pitch that is a
// multiple of the device's alignment.
bool MayViewAsImage(const ImageViewCaps& caps, uint64_t row_elements) {
  if (!caps.from_buffer || row_elements % 4 != 0) return false;
  return caps.pitch_alignment == 0 ||
         (row_elements / 4) % caps.pitch_alignment == 0;
}

// The arguments of tunefleet_pack_image_float (measure/image_pack.cl):
// `rows` rows of `row_elements` floats of `src` into `image`, `width`
// texels wide.
cl_int SetPackArgs(cl_kernel k, cl_mem src, uint64_t row_elements,
                   uint64_t width, uint64_t rows, cl_mem image) {
  const cl_uint row = static_cast<cl_uint>(row_elements);
  const cl_uint w = static_cast<cl_uint>(width);
  const cl_uint h = static_cast<cl_uint>(rows);
  cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &src);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 1, sizeof(row), &row);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 2, sizeof(w), &w);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 3, sizeof(h), &h);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 4, sizeof(cl_mem), &image);
  return err;
}

}  // namespace

// What a run enqueues, made once at load.
struct Model::Impl {
  // One command of a run.
  struct Command {
    enum Kind { kKernel, kCopyToImage, kLibrary };
    Kind kind = kKernel;
    Kernel kernel;
    cl_uint work_dims = 1;
    size_t global[3] = {1, 1, 1};
    size_t local[3] = {0, 0, 0};
    bool has_local = false;
    // kCopyToImage: the arena's bytes at src_offset into `image`.
    cl_mem image = nullptr;
    size_t src_offset = 0;
    size_t region[3] = {1, 1, 1};
    // kLibrary.
    std::string library, routine;
    std::vector<LibraryArgument> args;
    // kKernel: arguments bound to a tensor's buffer, (root tensor, index):
    // where a replay may rebind a graph input.
    std::vector<std::pair<int32_t, cl_uint>> tensor_args;
    // kCopyToImage: the root tensor it reads, and the packing kernel a
    // recording runs in its place (null: the copy stays a plain command).
    int32_t src_tensor = -1;
    Kernel record_kernel;
    size_t record_global[2] = {1, 1};
  };
  struct Step {
    std::vector<Command> commands;
  };
  // A graph output: where Run reads it, or its constant values.
  struct Output {
    uint64_t offset = 0;
    uint64_t elements = 0;
    std::vector<float> constant;  // not empty: a constant output
  };

  cl_context context = nullptr;
  cl_device_id device = nullptr;
  LibraryCalls* library = nullptr;
  std::mutex mu;
  Mem arena, weights;
  std::vector<Mem> scratch;
  std::vector<Mem> tensor_buffers;    // per root tensor: a sub-buffer
  std::vector<Mem> constant_buffers;  // per constant: sub-buffer or image
  std::vector<Mem> images;            // of tensors read as images
  std::vector<Program> programs;
  std::vector<Step> steps;
  std::vector<uint64_t> input_offsets;  // bytes in the arena
  std::vector<Output> outputs;
  std::vector<int32_t> root;  // per tensor: the tensor holding its bytes
  // Per step, the events of its first and last commands (profiled runs).
  std::vector<cl_event> first_events, last_events;

  // Recording (recording.h): what a replaying run enqueues, in order: a
  // recorded list of launches, or a command that cannot be recorded (a
  // library call, an image copy without a packing kernel), enqueued plain.
  struct ReplayItem {
    int list = -1;                   // >= 0: recorded list `list`
    const Command* plain = nullptr;  // else this command
    size_t step = 0;
  };
  // A launch argument bound to a graph input's buffer.
  struct InputUse {
    size_t list = 0;
    size_t launch = 0;
    cl_uint arg = 0;
  };
  std::vector<ReplayItem> replay_items;
  std::vector<std::vector<InputUse>> input_uses;  // per graph input
  std::vector<bool> input_rebindable;  // every use of it is in input_uses
  std::vector<cl_mem> input_recorded;  // per graph input: its buffer
  bool replay = false;                 // runs replay the recording
  bool rebound = false;  // the last replay rebound inputs (KHR: restore)
  // Last, so that it is released before the kernels it recorded.
  std::unique_ptr<Recording> recording;

  // Members go in reverse order of declaration, and the buffers of each
  // vector in reverse order of their creation: NVIDIA's OpenCL driver (H200,
  // 2026-11) crashed in clReleaseMemObject when the arena's overlapping
  // sub-buffers were released in the order they were made (std::vector
  // destroys front to back).
  ~Impl() {
    recording.reset();
    steps.clear();
    programs.clear();
    for (std::vector<Mem>* v :
         {&images, &constant_buffers, &tensor_buffers, &scratch}) {
      while (!v->empty()) v->pop_back();
    }
  }

  // Enqueues `cmd` as it is (a kernel, an image copy or a library call);
  // `event`, when not null, receives its event.
  cl_int Enqueue(cl_command_queue queue, const Command& cmd, cl_event* event,
                 std::string* message);
  // Enqueues the recording's lists and the plain commands between them;
  // `input_buffers` (RunBuffers), when not null, are rebound in place of
  // the arena's input tensors where replays can rebind.
  cl_int Replay(cl_command_queue queue, const cl_mem* input_buffers,
                std::string* error);
};

Model::Model() : impl_(new Impl) {}

Model::~Model() {
  if (impl_ != nullptr) {
    for (cl_event e : impl_->first_events) {
      if (e != nullptr) clReleaseEvent(e);
    }
    for (cl_event e : impl_->last_events) {
      if (e != nullptr) clReleaseEvent(e);
    }
  }
}

cl_int Model::Load(cl_context context, cl_device_id device,
                   const std::string& plan_path,
                   const std::string& weights_path,
                   const ModelLoadOptions& options, std::unique_ptr<Model>* out,
                   std::string* error) {
  std::string message, plan_file, weights_file;
  int32_t code = ReadWholeFile(plan_path, &plan_file, &message);
  if (code == 0) code = ReadWholeFile(weights_path, &weights_file, &message);
  if (code != 0) return Fail(code, message, error);
  return LoadBytes(context, device, plan_file, weights_file, options, out,
                   error);
}

cl_int Model::LoadBytes(cl_context context, cl_device_id device,
                        const std::string& plan_file,
                        const std::string& weights_file,
                        const ModelLoadOptions& options,
                        std::unique_ptr<Model>* out, std::string* error) {
  Plan plan;
  std::string message;
  const int32_t code =
      DecodePlan(plan_file, weights_file,
                 PlanExpectations{options.model_sha256, options.device_key},
                 &plan, &message);
  if (code != 0) return Fail(code, message, error);
  return LoadPlan(context, device, std::move(plan), options, out, error);
}

cl_int Model::LoadPlan(cl_context context, cl_device_id device, Plan plan,
                       const ModelLoadOptions& options,
                       std::unique_ptr<Model>* out, std::string* error) {
  if (context == nullptr || device == nullptr || out == nullptr) {
    return Fail(CL_INVALID_VALUE, "Load: a null context, device or out", error);
  }
  auto lower = [](std::string s) {
    for (char& c : s)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (!options.model_sha256.empty() &&
      lower(options.model_sha256) != lower(plan.header.model_sha256)) {
    return Fail(kPlanOtherModel,
                "plan: made for another model ('" + plan.header.model_name +
                    "'): emit the plan again for this model",
                error);
  }
  if (!options.device_key.empty() &&
      options.device_key != plan.header.device_key) {
    return Fail(kPlanOtherDevice,
                "plan: made for device key '" + plan.header.device_key +
                    "', not '" + options.device_key + "'",
                error);
  }
  const std::string name = DeviceText(device, CL_DEVICE_NAME);
  if (options.check_device_name && !plan.header.device_name.empty() &&
      name != plan.header.device_name) {
    return Fail(kModelOtherDevice,
                "plan: tuned on '" + plan.header.device_name +
                    "' (device key '" + plan.header.device_key +
                    "'), this device is '" + name +
                    "': use a plan of its key (or load without the device "
                    "check)",
                error);
  }
  std::unique_ptr<Model> model(new Model());
  Impl& m = *model->impl_;
  m.context = context;
  m.device = device;
  m.library = options.library;

  // Alignment: the plan's offsets must be multiples of the device's.
  cl_uint align_bits = 0;
  cl_int err = clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                               sizeof(align_bits), &align_bits, nullptr);
  if (err != CL_SUCCESS) {
    return Fail(err, "CL_DEVICE_MEM_BASE_ADDR_ALIGN: " + ClCode(err), error);
  }
  const uint64_t align = std::max<uint64_t>(align_bits / 8, 4);
  if (plan.memory.alignment == 0 || plan.memory.alignment % align != 0) {
    PlanArena(&plan,
              AlignUp(std::max<uint64_t>(plan.memory.alignment, 1), align));
    model->replanned_ = true;
  }
  cl_ulong max_alloc = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc),
                  &max_alloc, nullptr);
  if (max_alloc != 0 && plan.memory.arena_bytes > max_alloc) {
    return Fail(kModelOtherDevice,
                "plan: its arena of " +
                    std::to_string(plan.memory.arena_bytes) +
                    " bytes is larger than the device's largest buffer (" +
                    std::to_string(max_alloc) + " bytes)",
                error);
  }

  // The arena and a sub-buffer per root tensor.
  m.arena.reset(clCreateBuffer(context, CL_MEM_READ_WRITE,
                               std::max<uint64_t>(plan.memory.arena_bytes, 4),
                               nullptr, &err));
  if (err != CL_SUCCESS) {
    return Fail(err,
                "the arena (" + std::to_string(plan.memory.arena_bytes) +
                    " bytes): " + ClCode(err),
                error);
  }
  const size_t num_tensors = plan.tensors.size();
  m.tensor_buffers.resize(num_tensors);
  m.root.resize(num_tensors);
  for (size_t t = 0; t < num_tensors; ++t) {
    const PlanTensor& tensor = plan.tensors[t];
    m.root[t] =
        tensor.alias_of >= 0 ? tensor.alias_of : static_cast<int32_t>(t);
    if (tensor.alias_of >= 0 || tensor.constant >= 0) continue;
    cl_buffer_region region = {static_cast<size_t>(tensor.offset),
                               static_cast<size_t>(tensor.elements * 4)};
    m.tensor_buffers[t].reset(
        clCreateSubBuffer(m.arena.get(), CL_MEM_READ_WRITE,
                          CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
    if (err != CL_SUCCESS) {
      return Fail(err,
                  "tensor '" + tensor.name + "': a sub-buffer at offset " +
                      std::to_string(tensor.offset) + ": " + ClCode(err),
                  error);
    }
  }

  // Weights: plain constants in one buffer at aligned offsets, image
  // constants as images, both filled from the host once.
  const auto* blob =
      reinterpret_cast<const unsigned char*>(plan.weights.data());
  std::vector<uint64_t> weight_offsets(plan.constants.size(), 0);
  uint64_t weights_size = 0;
  for (size_t c = 0; c < plan.constants.size(); ++c) {
    if (plan.constants[c].image_width > 0) continue;
    weights_size = AlignUp(weights_size, align);
    weight_offsets[c] = weights_size;
    weights_size += plan.constants[c].elements * 4;
  }
  if (weights_size > 0) {
    std::vector<unsigned char> staging(weights_size, 0);
    for (size_t c = 0; c < plan.constants.size(); ++c) {
      const PlanConstant& k = plan.constants[c];
      if (k.image_width > 0) continue;
      std::memcpy(staging.data() + weight_offsets[c], blob + k.weights_offset,
                  k.elements * 4);
    }
    m.weights.reset(clCreateBuffer(context,
                                   CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   weights_size, staging.data(), &err));
    if (err != CL_SUCCESS) {
      return Fail(err,
                  "the weights buffer (" + std::to_string(weights_size) +
                      " bytes): " + ClCode(err),
                  error);
    }
  }
  model->weights_bytes_ = weights_size;
  const cl_image_format rgba_float = {CL_RGBA, CL_FLOAT};
  m.constant_buffers.resize(plan.constants.size());
  for (size_t c = 0; c < plan.constants.size(); ++c) {
    const PlanConstant& k = plan.constants[c];
    if (k.image_width > 0) {
      cl_image_desc desc;
      std::memset(&desc, 0, sizeof(desc));
      desc.image_type = CL_MEM_OBJECT_IMAGE2D;
      desc.image_width = k.image_width;
      desc.image_height = k.image_rows;
      desc.image_row_pitch = k.image_width * 16;
      m.constant_buffers[c].reset(clCreateImage(
          context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba_float, &desc,
          const_cast<unsigned char*>(blob + k.weights_offset), &err));
      model->image_bytes_ += k.image_rows * k.image_width * 16;
    } else {
      cl_buffer_region region = {
          static_cast<size_t>(weight_offsets[c]),
          static_cast<size_t>(std::max<uint64_t>(k.elements * 4, 4))};
      if (k.elements == 0) continue;
      m.constant_buffers[c].reset(
          clCreateSubBuffer(m.weights.get(), CL_MEM_READ_ONLY,
                            CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
    }
    if (err != CL_SUCCESS) {
      return Fail(
          err,
          "constant " + std::to_string(c) +
              (k.image_width > 0
                   ? " (an image of " + std::to_string(k.image_width) + " x " +
                         std::to_string(k.image_rows) + " texels)"
                   : std::string()) +
              ": " + ClCode(err),
          error);
    }
  }

  // Scratch slots, zero-filled once.
  for (uint64_t bytes : plan.memory.scratch_bytes) {
    std::vector<unsigned char> zeros(std::max<uint64_t>(bytes, 4), 0);
    m.scratch.emplace_back(
        clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                       zeros.size(), zeros.data(), &err));
    if (err != CL_SUCCESS) {
      return Fail(err, "a scratch buffer: " + ClCode(err), error);
    }
    model->scratch_bytes_ += zeros.size();
  }

  // Programs, built once per (source, options).
  std::vector<std::pair<std::pair<int32_t, std::string>, cl_program>> built;
  auto program_of = [&](int32_t source, const std::string& build_options,
                        const std::string& what, cl_program* program) {
    for (const auto& [key, p] : built) {
      if (key.first == source && key.second == build_options) {
        *program = p;
        return CL_SUCCESS;
      }
    }
    const char* text = plan.sources[source].c_str();
    cl_int e = CL_SUCCESS;
    Program p(clCreateProgramWithSource(context, 1, &text, nullptr, &e));
    if (e != CL_SUCCESS) {
      return Fail(e, what + ": clCreateProgramWithSource: " + ClCode(e), error);
    }
    e = clBuildProgram(p.get(), 1, &device, build_options.c_str(), nullptr,
                       nullptr);
    if (e != CL_SUCCESS) {
      return Fail(e,
                  what + ": the kernel does not build (" + ClCode(e) +
                      ", options '" + build_options + "'):\n" +
                      BuildLogOf(p.get(), device),
                  error);
    }
    *program = p.get();
    built.emplace_back(std::make_pair(source, build_options), p.get());
    m.programs.push_back(std::move(p));
    return CL_SUCCESS;
  };

  auto buffer_of_tensor = [&](int64_t t) {
    return m.tensor_buffers[m.root[t]].get();
  };

  // Commands, their kernels created and arguments set. A tensor read
  // through an image is packed once: later layers that read it through an
  // image of the same shape read that image, until a layer writes the
  // tensor's memory again (`packed`: by root tensor, row elements and rows,
  // the image and the layer that packed it; `image_reads`: each layer's
  // choice, in words, for Describe()).
  struct TensorImage {
    cl_mem image = nullptr;
    size_t layer = 0;
    bool view = false;  // the tensor's own memory (ImageViewCaps)
  };
  std::map<std::tuple<int32_t, int64_t, int64_t>, TensorImage> packed;
  const ImageViewCaps view_caps =
      options.image_views
          ? QueryImageViewCaps(device, options.assume_image_from_buffer)
          : ImageViewCaps{};
  std::vector<std::vector<std::string>> image_reads(plan.steps.size());
  m.steps.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    const std::string where = "layer " + std::to_string(s) + " ('" +
                              step.label + "', " + step.workload + ")";
    for (const PlanCommand& c : step.commands) {
      if (c.kind == PlanCommand::kLibrary) {
        if (m.library == nullptr || !m.library->Has(c.library, c.routine)) {
          return Fail(kModelLibraryMissing,
                      where + ": calls " + c.library + " (" + c.routine +
                          "), which this process cannot call: install it, or "
                          "emit the plan without library calls",
                      error);
        }
        Impl::Command cmd;
        cmd.kind = Impl::Command::kLibrary;
        cmd.library = c.library;
        cmd.routine = c.routine;
        for (const PlanArg& a : c.args) {
          LibraryArgument arg;
          if (a.kind == PlanArg::kInt) {
            arg.kind = LibraryArgument::kInteger;
            arg.integer = a.value;
          } else if (a.kind == PlanArg::kFloat) {
            arg.kind = LibraryArgument::kFloat;
            arg.real = a.real;
          } else if (a.kind == PlanArg::kTensor) {
            arg.kind = LibraryArgument::kBuffer;
            arg.buffer = buffer_of_tensor(a.value);
            arg.elements = plan.tensors[a.value].elements;
          } else if (a.kind == PlanArg::kConstant &&
                     plan.constants[a.value].image_width == 0) {
            arg.kind = LibraryArgument::kBuffer;
            arg.buffer = m.constant_buffers[a.value].get();
            arg.elements = plan.constants[a.value].elements;
          } else {
            return Fail(kPlanCorrupt,
                        where +
                            ": a library call with an image or scratch "
                            "argument",
                        error);
          }
          cmd.args.push_back(arg);
        }
        m.steps[s].commands.push_back(std::move(cmd));
        continue;
      }
      cl_program program = nullptr;
      err = program_of(c.source, c.build_options, where, &program);
      if (err != CL_SUCCESS) return err;
      Impl::Command cmd;
      cmd.kernel.reset(clCreateKernel(program, c.kernel_name.c_str(), &err));
      if (err != CL_SUCCESS) {
        return Fail(err,
                    where + ": kernel " + c.kernel_name + ": " + ClCode(err),
                    error);
      }
      std::vector<Impl::Command> fills;  // images filled before the kernel
      for (size_t i = 0; i < c.args.size() && err == CL_SUCCESS; ++i) {
        const PlanArg& a = c.args[i];
        const cl_uint index = static_cast<cl_uint>(i);
        switch (a.kind) {
          case PlanArg::kInt: {
            const cl_int v = static_cast<cl_int>(a.value);
            err = clSetKernelArg(cmd.kernel.get(), index, sizeof(v), &v);
            break;
          }
          case PlanArg::kFloat:
            err =
                clSetKernelArg(cmd.kernel.get(), index, sizeof(float), &a.real);
            break;
          case PlanArg::kTensor: {
            cl_mem mem = buffer_of_tensor(a.value);
            err = clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
            cmd.tensor_args.emplace_back(m.root[a.value], index);
            break;
          }
          case PlanArg::kConstant: {
            cl_mem mem = m.constant_buffers[a.value].get();
            err = clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
            break;
          }
          case PlanArg::kScratch: {
            cl_mem mem = m.scratch[a.value].get();
            err = clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
            break;
          }
          case PlanArg::kNull: {
            cl_mem mem = nullptr;
            err = clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
            break;
          }
          case PlanArg::kTensorImage: {
            const int32_t root = m.root[a.value];
            const auto key = std::make_tuple(root, a.row_elements, a.rows);
            const std::string& name = plan.tensors[a.value].name;
            auto earlier = packed.find(key);
            if (earlier != packed.end()) {
              cl_mem mem = earlier->second.image;
              err =
                  clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
              image_reads[s].push_back(
                  name +
                  (earlier->second.view
                       ? " through the image view of layer "
                       : " through the image packed by layer ") +
                  std::to_string(earlier->second.layer));
              break;
            }
            const size_t width = (a.row_elements + 3) / 4;
            cl_image_desc desc;
            std::memset(&desc, 0, sizeof(desc));
            desc.image_type = CL_MEM_OBJECT_IMAGE2D;
            desc.image_width = width;
            desc.image_height = a.rows;
            std::string view_refused;  // the driver's code, where it refused
            if (MayViewAsImage(view_caps, a.row_elements)) {
              desc.image_row_pitch = width * 16;
              desc.buffer = buffer_of_tensor(a.value);
              Mem view(clCreateImage(context, CL_MEM_READ_WRITE, &rgba_float,
                                     &desc, nullptr, &err));
              desc.image_row_pitch = 0;
              desc.buffer = nullptr;
              if (err == CL_SUCCESS) {
                cl_mem mem = view.get();
                err = clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem),
                                     &mem);
                packed[key] = {view.get(), s, true};
                ++model->image_views_;
                image_reads[s].push_back(name + " viewed as an image");
                m.images.push_back(std::move(view));
                break;
              }
              view_refused = ClCode(err);
            }
            Mem image(clCreateImage(context, CL_MEM_READ_WRITE, &rgba_float,
                                    &desc, nullptr, &err));
            if (err != CL_SUCCESS) break;
            model->image_bytes_ += width * a.rows * 16;
            // Whole texels are copied from the tensor; a partial last
            // texel needs the packing kernel, which a recording (kernels
            // only) also runs in place of the copy.
            const bool copies = a.row_elements % 4 == 0;
            Kernel pack_kernel;
            if (!copies || (plan.image_pack_source >= 0 &&
                            options.record != RecordMode::kOff)) {
              cl_program pack = nullptr;
              err = program_of(plan.image_pack_source, "", where, &pack);
              if (err != CL_SUCCESS) return err;
              pack_kernel.reset(
                  clCreateKernel(pack, "tunefleet_pack_image_float", &err));
              if (err != CL_SUCCESS) break;
              err = SetPackArgs(pack_kernel.get(), buffer_of_tensor(a.value),
                                a.row_elements, width, a.rows, image.get());
              if (err != CL_SUCCESS) break;
            }
            Impl::Command fill;
            if (copies) {
              fill.kind = Impl::Command::kCopyToImage;
              fill.image = image.get();
              fill.src_offset = plan.tensors[root].offset;
              fill.region[0] = width;
              fill.region[1] = a.rows;
              fill.src_tensor = root;
              if (pack_kernel != nullptr) {
                fill.record_kernel = std::move(pack_kernel);
                fill.record_global[0] = width;
                fill.record_global[1] = a.rows;
              }
            } else {
              fill.kernel = std::move(pack_kernel);
              fill.tensor_args.emplace_back(root, 0);
              fill.work_dims = 2;
              fill.global[0] = width;
              fill.global[1] = a.rows;
            }
            cl_mem mem = image.get();
            if (err == CL_SUCCESS) {
              err =
                  clSetKernelArg(cmd.kernel.get(), index, sizeof(cl_mem), &mem);
            }
            packed[key] = {image.get(), s, false};
            ++model->image_fills_;
            image_reads[s].push_back(
                name + " packed into an image" +
                (view_refused.empty()
                     ? ""
                     : " (the driver refused a view: " + view_refused + ")"));
            m.images.push_back(std::move(image));
            fills.push_back(std::move(fill));
            break;
          }
          default:
            err = kPlanCorrupt;
        }
        if (err != CL_SUCCESS) {
          return Fail(err,
                      where + ": argument " + std::to_string(i) + " of " +
                          c.kernel_name + ": " + ClCode(err),
                      error);
        }
      }
      cmd.work_dims = c.work_dims;
      for (int d = 0; d < 3; ++d) {
        cmd.global[d] = static_cast<size_t>(c.global[d]);
        cmd.local[d] = static_cast<size_t>(c.local[d]);
      }
      cmd.has_local = c.local[0] != 0;
      for (Impl::Command& fill : fills) {
        m.steps[s].commands.push_back(std::move(fill));
      }
      m.steps[s].commands.push_back(std::move(cmd));
    }
    // What this layer writes is packed again where read through an image.
    for (int32_t t : step.writes) {
      for (auto it = packed.begin(); it != packed.end();) {
        it = std::get<0>(it->first) == m.root[t] ? packed.erase(it) : ++it;
      }
    }
    model->commands_per_run_ += static_cast<int>(m.steps[s].commands.size());
  }

  // Inputs, outputs and the description.
  auto info_of = [&](int32_t t) {
    const PlanTensor& x = plan.tensors[t];
    return ModelTensorInfo{x.name, x.dims, x.elements};
  };
  for (int32_t t : plan.inputs) {
    model->inputs_.push_back(info_of(t));
    m.input_offsets.push_back(plan.tensors[m.root[t]].offset);
  }
  for (int32_t t : plan.outputs) {
    model->outputs_.push_back(info_of(t));
    Impl::Output o;
    o.elements = plan.tensors[t].elements;
    const PlanTensor& x = plan.tensors[m.root[t]];
    if (x.constant >= 0) {
      const PlanConstant& k = plan.constants[x.constant];
      o.constant.resize(k.elements);
      std::memcpy(o.constant.data(), blob + k.weights_offset, k.elements * 4);
    } else {
      o.offset = x.offset;
    }
    m.outputs.push_back(std::move(o));
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    ModelLayer layer;
    layer.label = step.label;
    layer.workload = step.workload;
    layer.entry = step.entry;
    layer.template_name = step.template_name;
    layer.config = step.config;
    layer.estimate_ns = step.estimate_ns;
    layer.commands = static_cast<int>(step.commands.size());
    for (int32_t t : step.reads) layer.reads.push_back(info_of(t));
    for (int32_t t : step.writes) layer.writes.push_back(info_of(t));
    layer.image_reads = std::move(image_reads[s]);
    model->layers_.push_back(std::move(layer));
  }
  m.first_events.assign(plan.steps.size(), nullptr);
  m.last_events.assign(plan.steps.size(), nullptr);
  model->header_ = plan.header;
  model->arena_bytes_ = plan.memory.arena_bytes;
  model->tensor_bytes_ = plan.memory.tensor_bytes;
  err = model->Record(plan, options, error);
  if (err != CL_SUCCESS) return err;
  *out = std::move(model);
  return CL_SUCCESS;
}

cl_int Model::Record(const Plan& plan, const ModelLoadOptions& options,
                     std::string* error) {
  Impl& m = *impl_;
  if (options.record == RecordMode::kOff) {
    recording_note_ = "off (--record off)";
    return CL_SUCCESS;
  }
  const RecordingApi api = options.recording_api != nullptr
                               ? *options.recording_api
                               : LoadRecordingApi(m.device);
  std::string why;
  const RecordKind kind = ChooseRecordKind(api, &why);
  if (kind == RecordKind::kNone) {
    if (options.record == RecordMode::kOn) {
      return Fail(kModelCannotRecord,
                  "cannot record the plan: " + why +
                      " (run with recording off or auto: plain enqueues)",
                  error);
    }
    recording_note_ = "not recorded: " + why;
    return CL_SUCCESS;
  }

  // Graph inputs' roots; an input that is also an output is read back
  // from the arena, so replays never rebind it.
  std::vector<int32_t> input_roots;
  for (int32_t t : plan.inputs) {
    input_roots.push_back(m.root[t]);
    m.input_recorded.push_back(m.tensor_buffers[m.root[t]].get());
  }
  m.input_uses.assign(input_roots.size(), {});
  m.input_rebindable.assign(input_roots.size(), true);
  for (int32_t t : plan.outputs) {
    for (size_t i = 0; i < input_roots.size(); ++i) {
      if (m.root[t] == input_roots[i]) m.input_rebindable[i] = false;
    }
  }
  auto input_of = [&](int32_t root) -> int {
    for (size_t i = 0; i < input_roots.size(); ++i) {
      if (input_roots[i] == root) return static_cast<int>(i);
    }
    return -1;
  };

  // The lists: runs of launches between commands a recording cannot hold.
  std::vector<std::vector<RecordedLaunch>> lists;
  std::vector<RecordedLaunch> current;
  auto close_list = [&] {
    if (current.empty()) return;
    m.replay_items.push_back(
        Impl::ReplayItem{static_cast<int>(lists.size()), nullptr, 0});
    lists.push_back(std::move(current));
    current.clear();
  };
  int launches = 0;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    for (const Impl::Command& c : m.steps[s].commands) {
      const bool copy_as_kernel =
          c.kind == Impl::Command::kCopyToImage && c.record_kernel != nullptr;
      if (c.kind != Impl::Command::kKernel && !copy_as_kernel) {
        close_list();
        m.replay_items.push_back(Impl::ReplayItem{-1, &c, s});
        // A plain command reading an input's bytes (a library call, an
        // image copy) keeps that input copied in.
        for (size_t i = 0; i < input_roots.size(); ++i) {
          if (c.kind == Impl::Command::kCopyToImage &&
              c.src_tensor == input_roots[i]) {
            m.input_rebindable[i] = false;
          }
          for (const LibraryArgument& a : c.args) {
            if (a.kind == LibraryArgument::kBuffer &&
                a.buffer == m.tensor_buffers[input_roots[i]].get()) {
              m.input_rebindable[i] = false;
            }
          }
        }
        continue;
      }
      RecordedLaunch launch;
      if (copy_as_kernel) {
        launch.kernel = c.record_kernel.get();
        launch.work_dims = 2;
        launch.global = c.record_global;
        const int input = input_of(c.src_tensor);
        if (input >= 0) {
          launch.rebindable.push_back(RecordedLaunch::Rebindable{
              0, m.tensor_buffers[c.src_tensor].get()});
        }
      } else {
        launch.kernel = c.kernel.get();
        launch.work_dims = c.work_dims;
        launch.global = c.global;
        launch.local = c.has_local ? c.local : nullptr;
        for (const auto& [root, arg] : c.tensor_args) {
          if (input_of(root) >= 0) {
            launch.rebindable.push_back(
                RecordedLaunch::Rebindable{arg, m.tensor_buffers[root].get()});
          }
        }
      }
      for (const RecordedLaunch::Rebindable& r : launch.rebindable) {
        for (size_t i = 0; i < input_roots.size(); ++i) {
          if (r.recorded == m.tensor_buffers[input_roots[i]].get()) {
            m.input_uses[i].push_back(
                Impl::InputUse{lists.size(), current.size(), r.arg});
          }
        }
      }
      current.push_back(std::move(launch));
      ++launches;
    }
  }
  close_list();
  std::string message;
  const cl_int err = Recording::Create(
      api, kind, m.context, m.device, std::move(lists), &m.recording, &message);
  if (err != CL_SUCCESS) {
    m.replay_items.clear();
    if (options.record == RecordMode::kOn) {
      return Fail(err,
                  "recording the plan (" + std::string(RecordKindName(kind)) +
                      "): " + message,
                  error);
    }
    recording_note_ = std::string("not recorded: ") + RecordKindName(kind) +
                      " failed: " + message;
    return CL_SUCCESS;
  }
  m.replay = true;
  record_kind_ = kind;
  recorded_lists_ = static_cast<int>(m.recording->lists());
  int rebound = 0;
  for (size_t i = 0; i < m.input_rebindable.size(); ++i) {
    rebound += m.recording->can_rebind() && m.input_rebindable[i];
  }
  recording_note_ =
      std::string(RecordKindName(kind)) +
      (kind == RecordKind::kKhrCommandBuffer && !api.khr_version.empty()
           ? " " + api.khr_version
           : std::string()) +
      ": " + std::to_string(launches) + " launches in " +
      std::to_string(recorded_lists_) +
      (recorded_lists_ == 1 ? " list" : " lists") +
      (m.replay_items.size() > m.recording->lists()
           ? ", " +
                 std::to_string(m.replay_items.size() - m.recording->lists()) +
                 " commands plain between them"
           : std::string()) +
      "; inputs " +
      (rebound > 0 ? "rebound by RunBuffers (" + std::to_string(rebound) +
                         " of " + std::to_string(input_roots.size()) + ")"
                   : std::string("copied in")) +
      (api.unusable.empty() ? std::string() : " (" + api.unusable + ")");
  return CL_SUCCESS;
}

cl_int Model::Run(cl_command_queue queue, const float* const* inputs,
                  size_t num_inputs, float* const* outputs, size_t num_outputs,
                  std::string* error) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return RunLocked(queue, inputs, num_inputs, outputs, num_outputs, nullptr,
                   error);
}

cl_int Model::RunProfiled(cl_command_queue queue, const float* const* inputs,
                          size_t num_inputs, float* const* outputs,
                          size_t num_outputs, std::vector<double>* layer_ns,
                          std::string* error) {
  if (layer_ns == nullptr) {
    return Fail(kModelBadArguments, "RunProfiled: layer_ns is null", error);
  }
  cl_command_queue_properties properties = 0;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES,
                                     sizeof(properties), &properties, nullptr);
  if (err != CL_SUCCESS) {
    return Fail(err, "the queue: " + ClCode(err), error);
  }
  if ((properties & CL_QUEUE_PROFILING_ENABLE) == 0) {
    return Fail(kModelBadQueue,
                "RunProfiled: the queue was made without "
                "CL_QUEUE_PROFILING_ENABLE",
                error);
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  return RunLocked(queue, inputs, num_inputs, outputs, num_outputs, layer_ns,
                   error);
}

namespace {

// Checks that `queue` is of the model's context and device.
cl_int CheckQueue(cl_command_queue queue, cl_context context,
                  cl_device_id device, std::string* error) {
  cl_context queue_context = nullptr;
  cl_device_id queue_device = nullptr;
  cl_int err = clGetCommandQueueInfo(
      queue, CL_QUEUE_CONTEXT, sizeof(queue_context), &queue_context, nullptr);
  if (err == CL_SUCCESS) {
    err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(queue_device),
                                &queue_device, nullptr);
  }
  if (err != CL_SUCCESS) return Fail(err, "the queue: " + ClCode(err), error);
  if (queue_context != context || queue_device != device) {
    return Fail(kModelBadQueue,
                "the queue is of another context or device than the model's",
                error);
  }
  return CL_SUCCESS;
}

}  // namespace

cl_int Model::Impl::Enqueue(cl_command_queue queue, const Command& cmd,
                            cl_event* event, std::string* message) {
  switch (cmd.kind) {
    case Command::kKernel:
      return clEnqueueNDRangeKernel(
          queue, cmd.kernel.get(), cmd.work_dims, nullptr, cmd.global,
          cmd.has_local ? cmd.local : nullptr, 0, nullptr, event);
    case Command::kCopyToImage: {
      const size_t origin[3] = {0, 0, 0};
      return clEnqueueCopyBufferToImage(queue, arena.get(), cmd.image,
                                        cmd.src_offset, origin, cmd.region, 0,
                                        nullptr, event);
    }
    case Command::kLibrary:
      return library->Enqueue(cmd.library, cmd.routine, cmd.args, queue, event,
                              message);
  }
  return CL_INVALID_OPERATION;
}

cl_int Model::Impl::Replay(cl_command_queue queue, const cl_mem* input_buffers,
                           std::string* error) {
  const bool rebind =
      recording->can_rebind() && (input_buffers != nullptr || rebound);
  std::vector<Rebind> rebinds;
  for (const ReplayItem& item : replay_items) {
    std::string message;
    cl_int err = CL_SUCCESS;
    if (item.list >= 0) {
      rebinds.clear();
      for (size_t i = 0; rebind && i < input_uses.size(); ++i) {
        if (!input_rebindable[i]) continue;
        for (const InputUse& use : input_uses[i]) {
          if (use.list != static_cast<size_t>(item.list)) continue;
          rebinds.push_back(Rebind{
              use.launch, use.arg,
              input_buffers != nullptr ? input_buffers[i] : input_recorded[i]});
        }
      }
      err = recording->Replay(static_cast<size_t>(item.list), queue, rebinds,
                              &message);
    } else {
      err = Enqueue(queue, *item.plain, nullptr, &message);
    }
    if (err != CL_SUCCESS) {
      if (error != nullptr) {
        *error = "replaying the recorded plan: " +
                 (item.list >= 0 ? "list " + std::to_string(item.list)
                                 : "step " + std::to_string(item.step)) +
                 ": " + (message.empty() ? ClCode(err) : message);
      }
      return err;
    }
  }
  rebound = input_buffers != nullptr && recording->can_rebind();
  return CL_SUCCESS;
}

cl_int Model::RunLocked(cl_command_queue queue, const float* const* inputs,
                        size_t num_inputs, float* const* outputs,
                        size_t num_outputs, std::vector<double>* layer_ns,
                        std::string* error) {
  Impl& m = *impl_;
  if (num_inputs != inputs_.size() || num_outputs != outputs_.size() ||
      (num_inputs > 0 && inputs == nullptr) ||
      (num_outputs > 0 && outputs == nullptr)) {
    return Fail(kModelBadArguments,
                "Run: the model takes " + std::to_string(inputs_.size()) +
                    " inputs and " + std::to_string(outputs_.size()) +
                    " outputs, given " + std::to_string(num_inputs) + " and " +
                    std::to_string(num_outputs),
                error);
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr) {
      return Fail(kModelBadArguments,
                  "Run: input '" + inputs_[i].name + "' is null", error);
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outputs[i] == nullptr) {
      return Fail(kModelBadArguments,
                  "Run: output '" + outputs_[i].name + "' is null", error);
    }
  }
  cl_int err = CheckQueue(queue, m.context, m.device, error);
  if (err != CL_SUCCESS) return err;
  for (size_t i = 0; i < num_inputs && err == CL_SUCCESS; ++i) {
    err = clEnqueueWriteBuffer(queue, m.arena.get(), CL_FALSE,
                               m.input_offsets[i], inputs_[i].elements * 4,
                               inputs[i], 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return Fail(err,
                  "writing input '" + inputs_[i].name + "': " + ClCode(err),
                  error);
    }
  }
  const bool profile = layer_ns != nullptr;
  if (m.replay && !profile) {
    // The recording, replayed (profiled runs enqueue plain commands: a
    // replay has no per-layer events).
    err = m.Replay(queue, nullptr, error);
    if (err != CL_SUCCESS) return err;
  }
  for (size_t s = 0; s < m.steps.size() && !(m.replay && !profile); ++s) {
    Impl::Step& step = m.steps[s];
    const size_t n = step.commands.size();
    for (size_t c = 0; c < n; ++c) {
      Impl::Command& cmd = step.commands[c];
      // Profiled: the first and the last command of the step give events.
      cl_event* event = nullptr;
      if (profile && c + 1 == n) {
        event = &m.last_events[s];
      } else if (profile && c == 0) {
        event = &m.first_events[s];
      }
      if (cmd.kind == Impl::Command::kLibrary && profile && c == 0) {
        // The call's start: a marker before it.
        err =
            clEnqueueMarkerWithWaitList(queue, 0, nullptr, &m.first_events[s]);
        if (err != CL_SUCCESS) break;
        event = c + 1 == n ? &m.last_events[s] : nullptr;
      }
      std::string message;
      err = m.Enqueue(queue, cmd, event, &message);
      if (err != CL_SUCCESS) {
        return Fail(err,
                    "layer " + std::to_string(s) + " ('" + layers_[s].label +
                        "', " + layers_[s].workload + "): " +
                        (cmd.kind == Impl::Command::kLibrary
                             ? cmd.library + " " + cmd.routine + ": " + message
                             : "enqueue: " + ClCode(err)),
                    error);
      }
    }
  }
  if (err != CL_SUCCESS) {
    return Fail(err, "enqueue: " + ClCode(err), error);
  }
  for (size_t o = 0; o < num_outputs; ++o) {
    const Impl::Output& out = m.outputs[o];
    if (!out.constant.empty()) {
      std::memcpy(outputs[o], out.constant.data(), out.elements * 4);
      continue;
    }
    err =
        clEnqueueReadBuffer(queue, m.arena.get(), CL_FALSE, out.offset,
                            out.elements * 4, outputs[o], 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return Fail(err,
                  "reading output '" + outputs_[o].name + "': " + ClCode(err),
                  error);
    }
  }
  err = clFinish(queue);
  if (err != CL_SUCCESS) {
    return Fail(err, "the run failed on the device: " + ClCode(err), error);
  }
  if (profile) {
    layer_ns->assign(m.steps.size(), 0.0);
    for (size_t s = 0; s < m.steps.size(); ++s) {
      cl_event last = m.last_events[s];
      cl_event first = m.first_events[s] != nullptr ? m.first_events[s] : last;
      cl_ulong start = 0, end = 0;
      if (last != nullptr) {
        clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START,
                                sizeof(start), &start, nullptr);
        clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(end),
                                &end, nullptr);
      }
      (*layer_ns)[s] = end > start ? static_cast<double>(end - start) : 0.0;
      if (m.first_events[s] != nullptr) clReleaseEvent(m.first_events[s]);
      if (m.last_events[s] != nullptr) clReleaseEvent(m.last_events[s]);
      m.first_events[s] = nullptr;
      m.last_events[s] = nullptr;
    }
  }
  return CL_SUCCESS;
}

cl_int Model::RunBuffers(cl_command_queue queue, const cl_mem* inputs,
                         size_t num_inputs, const cl_mem* outputs,
                         size_t num_outputs, std::string* error) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl& m = *impl_;
  if (num_inputs != inputs_.size() || num_outputs != outputs_.size() ||
      (num_inputs > 0 && inputs == nullptr) ||
      (num_outputs > 0 && outputs == nullptr)) {
    return Fail(kModelBadArguments,
                "RunBuffers: the model takes " +
                    std::to_string(inputs_.size()) + " inputs and " +
                    std::to_string(outputs_.size()) + " outputs",
                error);
  }
  cl_int err = CheckQueue(queue, m.context, m.device, error);
  if (err != CL_SUCCESS) return err;
  // CL_SUCCESS when each of `mems` holds its tensor of `infos` (the model's
  // `role`s), else kModelBadArguments naming the first that does not.
  auto check_sizes = [error](const char* role, const cl_mem* mems,
                             const std::vector<ModelTensorInfo>& infos) {
    for (size_t i = 0; i < infos.size(); ++i) {
      size_t size = 0;
      if (mems[i] == nullptr ||
          clGetMemObjectInfo(mems[i], CL_MEM_SIZE, sizeof(size), &size,
                             nullptr) != CL_SUCCESS ||
          size < infos[i].elements * 4) {
        return Fail(kModelBadArguments,
                    std::string("RunBuffers: ") + role + " '" + infos[i].name +
                        "' is null or smaller than " +
                        std::to_string(infos[i].elements * 4) + " bytes",
                    error);
      }
    }
    return static_cast<cl_int>(CL_SUCCESS);
  };
  err = check_sizes("input", inputs, inputs_);
  if (err == CL_SUCCESS) err = check_sizes("output", outputs, outputs_);
  if (err != CL_SUCCESS) return err;
  const bool rebind = m.replay && m.recording->can_rebind();
  for (size_t i = 0; i < num_inputs && err == CL_SUCCESS; ++i) {
    if (rebind && m.input_rebindable[i]) continue;  // rebound, not copied
    err = clEnqueueCopyBuffer(queue, inputs[i], m.arena.get(), 0,
                              m.input_offsets[i], inputs_[i].elements * 4, 0,
                              nullptr, nullptr);
  }
  if (err == CL_SUCCESS && m.replay) {
    err = m.Replay(queue, rebind ? inputs : nullptr, error);
    if (err != CL_SUCCESS) return err;
  }
  for (size_t s = 0; s < m.steps.size() && err == CL_SUCCESS && !m.replay;
       ++s) {
    for (Impl::Command& cmd : m.steps[s].commands) {
      std::string message;
      err = m.Enqueue(queue, cmd, nullptr, &message);
      if (err != CL_SUCCESS) {
        return Fail(
            err,
            "layer " + std::to_string(s) + " ('" + layers_[s].label +
                "'): enqueue: " + (message.empty() ? ClCode(err) : message),
            error);
      }
    }
  }
  for (size_t o = 0; o < num_outputs && err == CL_SUCCESS; ++o) {
    const Impl::Output& out = m.outputs[o];
    if (!out.constant.empty()) {
      err =
          clEnqueueWriteBuffer(queue, outputs[o], CL_TRUE, 0, out.elements * 4,
                               out.constant.data(), 0, nullptr, nullptr);
    } else {
      err = clEnqueueCopyBuffer(queue, m.arena.get(), outputs[o], out.offset, 0,
                                out.elements * 4, 0, nullptr, nullptr);
    }
  }
  if (err == CL_SUCCESS) err = clFlush(queue);
  if (err != CL_SUCCESS) {
    return Fail(err, "RunBuffers: " + ClCode(err), error);
  }
  return CL_SUCCESS;
}

bool Model::replay() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->replay;
}

cl_int Model::SetReplay(bool replay, std::string* error) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (replay && impl_->recording == nullptr) {
    return Fail(
        kModelCannotRecord,
        "SetReplay: the plan was not recorded (" + recording_note_ + ")",
        error);
  }
  impl_->replay = replay;
  return CL_SUCCESS;
}

std::string Model::Describe() const {
  std::ostringstream out;
  out << "model " << header_.model_name << " (SHA-256 "
      << header_.model_sha256.substr(0, 16) << "), device key "
      << header_.device_key << ": " << layers_.size() << " layers, "
      << commands_per_run_ << " commands per run; arena " << arena_bytes_
      << " bytes (tensors " << tensor_bytes_ << " bytes), weights "
      << weights_bytes_ << " bytes, images " << image_bytes_ << " bytes\n";
  for (const ModelTensorInfo& t : inputs_) {
    out << "  input  " << t.name << " " << DimsText(t.dims) << "\n";
  }
  for (const ModelTensorInfo& t : outputs_) {
    out << "  output " << t.name << " " << DimsText(t.dims) << "\n";
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    const ModelLayer& l = layers_[i];
    out << "  " << i << " " << l.label << ": " << l.workload << " -> "
        << l.entry << " " << l.template_name;
    if (l.entry != "reference") out << " " << l.config;
    if (l.estimate_ns >= 0) out << " (" << l.estimate_ns / 1e3 << " us)";
    for (const ModelTensorInfo& t : l.writes) {
      out << " => " << t.name << " " << DimsText(t.dims);
    }
    for (const std::string& r : l.image_reads) out << "; reads " << r;
    out << "\n";
  }
  return out.str();
}

double Model::estimate_ns() const {
  double sum = 0;
  for (const ModelLayer& l : layers_) sum += std::max(l.estimate_ns, 0.0);
  return sum;
}

int Model::layers_without_estimate() const {
  int n = 0;
  for (const ModelLayer& l : layers_) n += l.estimate_ns < 0;
  return n;
}

}  // namespace tunefleet_tuned
