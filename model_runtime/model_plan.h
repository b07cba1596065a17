// A model plan (issue 35): what the model runtime (tunefleet_model.h) runs,
// as the plan builder (tunefleet's model_plan/) makes it from a model and
// the tuning records of one device key, and as the plan format
// (plan_format.h, docs/MODEL_PLAN.md) stores it. Plain C++17: this file is
// copied into every emitted library.
//
// A plan is a list of steps in execution order. Each step is one workload
// of the model (a convolution with its epilogue, a copy of a Concat, ...)
// and runs as one or two commands: a kernel launch, or a vendor-library
// call followed by its epilogue kernel. Every command is spelt out as the
// tuner measured it: the kernel's source, entry point, build options,
// NDRange and arguments, with the model's per-call floats (clip bounds,
// LeakyRelu's alpha, ...) in place. Tensors (fp32, dense, row-major) live
// in one device arena at offsets chosen by the memory plan
// (memory_plan.h); constants (weights, folded batch-norm, biases) live in
// one weights buffer, in the layout each kernel reads (for a kernel that
// reads a weight through an image2d_t: the image's texels).
#ifndef TUNEFLEET_MODEL_RUNTIME_MODEL_PLAN_H_
#define TUNEFLEET_MODEL_RUNTIME_MODEL_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet_tuned {

// The plan format's version (plan_format.h); a file of another version is
// refused.
inline constexpr uint32_t kPlanFormatVersion = 1;

// Offsets in the arena and the weights buffer are multiples of this many
// bytes unless the plan says otherwise (PlanMemory::alignment): at least
// CL_DEVICE_MEM_BASE_ADDR_ALIGN on every device tunefleet has met (PoCL
// 128 bytes, Mali 128, NVIDIA 512); a device that needs more gets the
// arena planned again at load (Model::Load).
inline constexpr uint64_t kDefaultPlanAlignment = 1024;

// What a plan was made for: refused at load when it does not match.
struct PlanHeader {
  uint32_t format_version = kPlanFormatVersion;
  std::string model_name;     // the ONNX file's name, for messages
  std::string model_sha256;   // SHA-256 of the ONNX bytes, 64 hex digits
  std::string device_key;     // the tuning records' device key
  std::string device_name;    // CL_DEVICE_NAME of that key's device
  std::string device_vendor;  // CL_DEVICE_VENDOR of that key's device
  // The fixed input shapes the plan was made at, by input name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
};

// A tensor of the model: fp32, dense, row-major at `dims`.
struct PlanTensor {
  enum Role : uint8_t {
    kIntermediate = 0,  // written and read by steps
    kInput = 1,         // a graph input: copied in by Run()
    kOutput = 2,        // a graph output: read back by Run()
    kInputOutput = 3,   // both
  };
  std::string name;
  std::vector<int64_t> dims;  // empty: a scalar
  uint64_t elements = 1;      // the product of dims
  Role role = kIntermediate;
  // >= 0: a view of that tensor (Reshape, Flatten, ...), which holds the
  // elements; never an alias of an alias.
  int32_t alias_of = -1;
  // >= 0: a graph output that is a constant after folding: the values of
  // that constant, written to the output by Run() (no step computes it).
  int32_t constant = -1;
  // Root tensors (alias_of < 0, constant < 0): the steps between which the
  // tensor must keep its elements, inclusive (-1: from before the first
  // step, a graph input; steps.size(): until after the last, a graph
  // output), and its offset in the arena, in bytes.
  int32_t first_step = 0;
  int32_t last_step = 0;
  uint64_t offset = 0;
};

// A constant of the model in the weights buffer: `elements` floats at
// `weights_offset` bytes of the weights blob (plan_format.h). An image
// constant (image_width > 0) holds image_rows x image_width RGBA texels of
// fp32 (4 floats each), row by row: what a kernel reads through an
// image2d_t.
struct PlanConstant {
  uint64_t elements = 0;
  uint64_t weights_offset = 0;  // bytes, a multiple of 4
  uint64_t image_rows = 0;
  uint64_t image_width = 0;  // texels; 0: a plain buffer
};

// One argument of a kernel or a library call.
struct PlanArg {
  enum Kind : uint8_t {
    kInt = 0,          // `value`, a 32-bit int
    kFloat = 1,        // `real`
    kTensor = 2,       // tensor number `value` (an alias: its root's memory)
    kConstant = 3,     // constant number `value` (a buffer, or an image
                       // constant read as an image2d_t)
    kTensorImage = 4,  // tensor number `value` read as an image2d_t of RGBA
                       // fp32 texels: `rows` rows of `row_elements`
                       // elements, ceil(row_elements / 4) texels wide,
                       // filled from the tensor before the command
    kScratch = 5,      // scratch slot `value` of at least `bytes` bytes,
                       // zero-filled once at load (kernels leave it zero)
    kNull = 6,         // a null buffer (a buffer the workload does not read)
  };
  Kind kind = kInt;
  int64_t value = 0;
  float real = 0;
  uint64_t rows = 0;
  uint64_t row_elements = 0;
  uint64_t bytes = 0;
};

// One command of a step: a kernel launch, or a vendor-library call (its
// arguments in the order tunefleet's agent documents for the routine:
// library_backends/library.h).
struct PlanCommand {
  enum Kind : uint8_t { kKernel = 0, kLibrary = 1 };
  Kind kind = kKernel;
  int32_t source = -1;  // kKernel: index into Plan::sources
  std::string kernel_name;
  std::string build_options;
  uint32_t work_dims = 1;
  uint64_t global[3] = {1, 1, 1};
  uint64_t local[3] = {0, 0, 0};  // all 0: the driver chooses
  std::string library;            // kLibrary: "clblast"
  std::string routine;            // kLibrary: "gemm", "convgemm", ...
  std::vector<PlanArg> args;
};

// One step: a workload of the model and what runs it.
struct PlanStep {
  std::string label;     // the ONNX node's name (or "<op_type>@<index>")
  std::string workload;  // canonical workload string
  // "tuned" (a generated config), "reference" (the template's naive
  // kernel: it measured faster, or the workload has no record) or
  // "library" (a vendor-library call measured fastest).
  std::string entry;
  std::string template_name;
  std::string config;  // "MWG=64,..."; "reference" for the naive kernel
  // The record's median time, ns (the estimate's share); < 0: none
  // measured.
  double estimate_ns = -1;
  std::vector<float> floats;    // the per-call floats, as the step has them
  std::vector<int32_t> reads;   // tensors read (for Describe())
  std::vector<int32_t> writes;  // tensors written
  std::vector<PlanCommand> commands;
};

// The memory plan: the arena's size and what offsets assume.
struct PlanMemory {
  uint64_t alignment = kDefaultPlanAlignment;  // bytes
  uint64_t arena_bytes = 0;  // peak: the largest offset + size
  // Bytes of every root tensor (graph inputs, outputs, intermediates) as if
  // each had its own buffer: what the arena saves against.
  uint64_t tensor_bytes = 0;
  std::vector<uint64_t> scratch_bytes;  // per scratch slot
};

struct Plan {
  PlanHeader header;
  std::vector<std::string> sources;  // OpenCL sources of the commands
  // The image-packing kernels (tunefleet's measure/image_pack.cl), in
  // sources; -1 when no command reads a tensor through an image.
  int32_t image_pack_source = -1;
  std::vector<PlanTensor> tensors;
  std::vector<PlanConstant> constants;
  std::vector<PlanStep> steps;
  std::vector<int32_t> inputs;   // graph inputs, in order (tensor numbers)
  std::vector<int32_t> outputs;  // graph outputs, in order
  PlanMemory memory;
  // The weights blob: every constant's floats (little-endian fp32), kept
  // in its own file (plan_format.h).
  std::string weights;
};

}  // namespace tunefleet_tuned

#endif  // TUNEFLEET_MODEL_RUNTIME_MODEL_PLAN_H_
