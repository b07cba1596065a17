// The descriptor of a tunable kernel: its knobs and constraints, how to
// launch it for a workload, its naive reference kernel and its FLOP count.
// One template = one OpenCL source + one descriptor, as in CLBlast's tuner
// layout; every built-in and user template is a SpecTemplate
// (spec/spec_template.h) run from its spec file, and the generic tuning
// engine lives in search/ and server/.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_KERNEL_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_KERNEL_TEMPLATE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/workload.h"

namespace tunefleet::templates {

// One tunable parameter and the values it may take, smallest first.
struct Knob {
  std::string name;
  std::vector<int64_t> values;
  // Sizes and factors are compared on a log2 scale by the cost model (as
  // AutoTVM does for split factors); flags and enums are not.
  bool size_like = true;
};

// A config: values[i] is the value of knobs()[i].
using KnobValues = std::vector<int64_t>;

// The device properties that template constraints and cost-model features
// read (clGetDeviceInfo values).
struct DeviceLimits {
  uint64_t max_work_group_size = 0;
  std::array<uint64_t, 3> max_work_item_sizes{};
  uint64_t local_mem_bytes = 0;
  uint64_t max_mem_alloc_bytes = 0;
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  uint32_t preferred_vector_width_float = 0;
  bool local_mem_is_global = false;  // "local" memory emulated in global
  // Images: CL_DEVICE_IMAGE_SUPPORT and CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT
  // (pixels; 0 without image support).
  bool image_support = false;
  uint64_t image2d_max_width = 0;
  uint64_t image2d_max_height = 0;
  // Extensions that change what is fast: cl_khr_image2d_from_buffer (an
  // image over a buffer, no copy), cl_khr_fp16, subgroups (cl_khr_subgroups,
  // cl_intel_subgroups or cl_qcom_subgroup_shuffle), and whether the driver
  // lists any of Qualcomm's (cl_qcom_*, Adreno) or Arm's (cl_arm_*, Mali).
  bool image2d_from_buffer = false;
  bool fp16 = false;
  bool subgroups = false;
  bool qcom_extensions = false;
  bool arm_extensions = false;
  // Vendor libraries the device's agent can call for library templates:
  // DeviceInfo.libraries has an entry whose first word is "clblast"
  // (CLBlast) or "clml" (Qualcomm's CLML).
  bool library_clblast = false;
  bool library_clml = false;
};

// A number describing a config for the cost model, with its name.
struct Feature {
  std::string name;
  double value = 0;
};

// A buffer of the workload's inputs and outputs, generated on the device.
struct BufferDesc {
  std::string name;
  uint64_t elements = 0;
  bool output = false;  // outputs start zeroed and are verified
  uint32_t seed = 0;    // inputs: uniform [-1, 1) values from this seed
  Dtype dtype = Dtype::kFp32;
  // Scratch: zero-filled when allocated (and after a failed kernel), never
  // verified; a kernel that needs it zero again must leave it so.
  bool zero_fill = false;
};

// One kernel argument: a buffer by name, a 32-bit integer, a float, or a
// buffer read as a read-only image2d_t of RGBA float texels (kImage: the
// buffer is `rows` rows of `row_elements` elements; the image is
// ceil(row_elements / 4) texels wide and `rows` high; v1::ImageArg says how
// the agent makes it).
struct ArgDesc {
  enum class Kind { kBuffer, kInt, kFloat, kImage };
  Kind kind = Kind::kInt;
  std::string buffer;  // kBuffer, kImage
  int32_t value = 0;
  float real = 0;
  uint64_t rows = 0;          // kImage: image height, pixels
  uint64_t row_elements = 0;  // kImage: elements per buffer row

  static ArgDesc Buffer(std::string name) {
    return ArgDesc{Kind::kBuffer, std::move(name), 0, 0};
  }
  static ArgDesc Int(int64_t v) {
    return ArgDesc{Kind::kInt, {}, static_cast<int32_t>(v), 0};
  }
  static ArgDesc Float(float v) { return ArgDesc{Kind::kFloat, {}, 0, v}; }
  static ArgDesc Image(std::string buffer, uint64_t rows,
                       uint64_t row_elements) {
    return ArgDesc{Kind::kImage, std::move(buffer), 0, 0, rows, row_elements};
  }
};

// A call into a vendor library in place of a generated kernel
// (v1::LibraryCall): the library ("clblast"), its routine ("gemm") and the
// routine's arguments in the order the agent's library backend documents.
struct LibraryDesc {
  std::string name;
  std::string routine;
  std::vector<ArgDesc> args;
};

// A ready-to-run kernel: source, entry point, build options, NDRange and
// arguments. `local` empty means the runtime chooses. With `library` set,
// the launch is that library call, followed by the kernel when `source` is
// not empty (an epilogue; both are timed together); a library launch with
// no kernel has empty source, kernel_name, global and args.
struct LaunchDesc {
  absl::string_view source;
  std::string kernel_name;
  std::string build_options;
  std::vector<uint64_t> global;
  std::vector<uint64_t> local;
  std::vector<ArgDesc> args;
  std::optional<LibraryDesc> library;
};

// A tunable kernel template. Implementations are immutable after
// construction and safe to use from several threads.
class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;

  virtual absl::string_view name() const = 0;
  // Bumped whenever source or descriptor change what a config means.
  virtual int version() const = 0;
  virtual absl::string_view op() const = 0;
  virtual const std::vector<Knob>& knobs() const = 0;
  // The OpenCL source of the tunable kernel (for hashing and emitting). A
  // library template's ends with a comment line naming its library call,
  // so that the source hash changes with the call.
  virtual absl::string_view source() const = 0;

  // OK when this template can run the workload on a device with these
  // limits (buffer sizes against max allocation, say).
  // Errors: INVALID_ARGUMENT naming the limit.
  virtual absl::Status CheckWorkload(const Workload& workload,
                                     const DeviceLimits& limits) const = 0;

  // OK when the config satisfies every constraint for this workload and
  // device; else INVALID_ARGUMENT naming the constraint. `config` must have
  // one value per knob.
  virtual absl::Status CheckConfig(const KnobValues& config,
                                   const Workload& workload,
                                   const DeviceLimits& limits) const = 0;
  // CheckConfig(...).ok(), for enumerating a search space: a template may
  // skip composing the messages of the configs it rejects.
  virtual bool ConfigValid(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const {
    return CheckConfig(config, workload, limits).ok();
  }

  // Buffers of the workload, shared by the candidate and the reference.
  virtual std::vector<BufferDesc> Buffers(const Workload& workload) const = 0;

  // The launch of one config (which must pass CheckConfig).
  virtual LaunchDesc Launch(const KnobValues& config,
                            const Workload& workload) const = 0;

  // The naive reference kernel: verification and the speed baseline.
  virtual LaunchDesc ReferenceLaunch(const Workload& workload) const = 0;

  // Floating-point operations of one run of the workload.
  virtual double Flops(const Workload& workload) const = 0;
  // Bytes a run must move at least: every input, weight and output once
  // (the roofline denominator; GB/s of memory-bound ops). Default 0.
  virtual double Bytes(const Workload& workload) const { return 0; }

  // Whether a launch is a vendor-library call (LaunchDesc::library) rather
  // than a generated kernel. Default: false.
  virtual bool is_library() const { return false; }

  // Verification tolerance: largest max|out-ref| / max|ref| accepted.
  virtual double rtol() const { return 1e-4; }
  // The tolerance for a workload: rtol(), widened to at least 1e-2 for fp16
  // storage (half has an 11-bit significand: about 5e-4 per rounding, which
  // sums over a reduction).
  virtual double Tolerance(const Workload& workload) const;

  // Whether the template can run the workload at all (its op and, for
  // templates of special cases, its shape), whatever the device.
  virtual bool Accepts(const Workload& workload) const {
    return workload.op() == op();
  }

  // Features the template derives from a config, its workload and device
  // (work-group size, register tile, local memory bytes, arithmetic
  // intensity, occupancy, ...), beyond the knob values themselves. Same
  // names in the same order for every config. Default: none.
  virtual std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const {
    return {};
  }

  // Returns the index of a knob by name, or -1.
  int KnobIndex(absl::string_view knob_name) const;
  // Maps name=value pairs onto knob order. Errors: INVALID_ARGUMENT naming
  // every unknown knob, every value outside its knob's values and every
  // missing knob in one message, e.g. "config is missing knobs KWG, MWI
  // (template gemm_tiled has MWG, NWG, KWG, ...)".
  absl::StatusOr<KnobValues> ConfigFromPairs(
      const std::vector<std::pair<std::string, int64_t>>& pairs) const;
  // Parses "MWG=64,NWG=64,..." into a config (ConfigFromPairs' errors).
  absl::StatusOr<KnobValues> ParseConfig(absl::string_view text) const;
  // "MWG=64,NWG=64,...": the inverse of ParseConfig.
  std::string ConfigString(const KnobValues& config) const;
  // 16 hex digits identifying name, version and source.
  std::string SourceHash() const;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_KERNEL_TEMPLATE_H_
