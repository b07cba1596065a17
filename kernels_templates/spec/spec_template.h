// A user's own template (issue 4): an OpenCL source plus a small
// declarative spec in TOML or JSON giving knobs and their values,
// constraints, launch geometry, buffers, arguments, the reference kernel
// and FLOP count. Every number in a spec may be an expression (see
// expression.h) over the op's dims, the knobs and the device limits
// max_work_group_size, max_work_item_size0..2, local_mem_bytes,
// max_mem_alloc_bytes and compute_units. Example (TOML):
//
//   name = "saxpy_vec"        # template name
//   op = "saxpy"              # a new op, or an existing one (dims must match)
//   dims = ["N"]
//   source = "saxpy.cl"       # relative to the spec file
//   flops = "2 * N"
//   bytes = "12 * N"          # optional
//   constraints = ["WG * VW <= 4096"]
//   [knobs]
//   VW = [1, 2, 4]
//   WG = [32, 64, 128]
//   [[buffers]]
//   name = "x"
//   elements = "N"
//   [[buffers]]
//   name = "y"
//   elements = "N"
//   output = true
//   [kernel]                  # knobs become -D defines
//   name = "saxpy"
//   global = ["ceil(N / (WG * VW)) * WG"]
//   local = ["WG"]
//   args = ["N", "float:2", "x", "y"]   # buffer names, int expressions,
//                                        # or float:<expression>
//   [reference]               # built with each knob's first value
//   name = "saxpy_reference"
//   global = ["N"]
//   args = ["N", "float:2", "x", "y"]
//
// Output buffers start zeroed; inputs get uniform values in [-1, 1).
//
// Hostile specs are refused, not trusted: names (template, op, dims, knobs,
// buffers, kernels) must be identifiers [A-Za-z_][A-Za-z0-9_]* of at most
// 64 characters (knobs become -D defines, names land in emitted code);
// knob values lie within +-(2^31 - 1); the counts and sizes below are
// capped (expressions at kMaxExpressionLength); sizes an expression yields
// are clamped into 1..2^53.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/spec/expression.h"

namespace tunefleet::templates {

// Caps on a spec (see above).
inline constexpr size_t kMaxSpecTextBytes = 1 << 20;
inline constexpr size_t kMaxSpecSourceBytes = 16 << 20;
inline constexpr size_t kMaxSpecNameLength = 64;
inline constexpr int kMaxSpecJsonDepth = 32;
inline constexpr size_t kMaxSpecDims = 16;
inline constexpr size_t kMaxSpecKnobs = 32;
inline constexpr size_t kMaxSpecKnobValues = 1024;
inline constexpr size_t kMaxSpecBuffers = 32;
inline constexpr size_t kMaxSpecConstraints = 64;
inline constexpr size_t kMaxSpecArgs = 64;
inline constexpr int64_t kMaxSpecKnobValue = (int64_t{1} << 31) - 1;

// Immutable after loading; thread-safe.
class SpecTemplate : public KernelTemplate {
 public:
  // Reads a spec file (.toml or .json) and the source it names. Errors:
  // NOT_FOUND for a missing file; INVALID_ARGUMENT naming the field or
  // expression that is wrong.
  static absl::StatusOr<std::unique_ptr<SpecTemplate>> Load(
      const std::string& path);

  // From text: `format` is "toml" or "json"; `source` is the OpenCL text
  // (the spec's "source" field is then ignored). Errors: INVALID_ARGUMENT
  // naming the field, expression or cap that is wrong.
  static absl::StatusOr<std::unique_ptr<SpecTemplate>> Parse(
      const std::string& spec, const std::string& format,
      const std::string& source);

  absl::string_view name() const override { return name_; }
  int version() const override { return version_; }
  absl::string_view op() const override { return op_; }
  const std::vector<Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }

  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  double Flops(const Workload& workload) const override;
  double Bytes(const Workload& workload) const override;
  double rtol() const override { return rtol_; }

  // The spec and source text, to ship to a remote server.
  const std::string& spec_text() const { return spec_text_; }
  const std::string& spec_format() const { return spec_format_; }
  // The op this template runs, for RegisterOp() when it is new.
  OpSpec Op() const;

 private:
  // One kernel of the spec (the tunable one or the reference).
  struct KernelSpec {
    std::string name;
    std::vector<int> global, local;  // expression handles
    struct Arg {
      enum Kind { kBuffer, kInt, kFloat } kind;
      std::string buffer;
      int expression = -1;
    };
    std::vector<Arg> args;
  };
  struct BufferSpec {
    std::string name;
    int elements = -1;
    bool output = false;
  };

  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Use Load() or Parse().
  explicit SpecTemplate(PrivateTag) {}

 private:
  absl::Status ParseSpec(const std::string& json_text);
  absl::StatusOr<KernelSpec> ParseKernel(const void* json, const char* field);
  std::map<std::string, double> Values(const KnobValues* config,
                                       const Workload& w,
                                       const DeviceLimits* limits) const;
  LaunchDesc MakeLaunch(const KernelSpec& k, const KnobValues* config,
                        const Workload& w) const;

  std::string name_, op_, source_, spec_text_, spec_format_;
  int version_ = 1;
  double rtol_ = 1e-4;
  std::vector<std::string> dims_;
  std::vector<Knob> knobs_;
  std::vector<std::string> defines_;  // knobs passed as -D
  std::vector<BufferSpec> buffers_;
  std::vector<int> constraints_;
  std::vector<std::string> constraint_texts_;
  int flops_ = -1, bytes_ = -1;
  KernelSpec kernel_, reference_;
  std::unique_ptr<ExpressionSet> expressions_;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_
