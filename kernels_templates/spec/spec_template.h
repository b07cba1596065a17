// A kernel template from a declarative spec in TOML or JSON plus OpenCL
// source: a user's own (issue 4) or a built-in one (kernels_templates/*/
// *.toml, embedded at build time); one engine runs them all. A spec gives
// knobs and their values, constraints, launch geometry, buffers,
// arguments, the reference kernel and FLOP count. Every number in a spec
// may be an expression (see expression.h) over these variables:
//   the op's dims; its string attributes, as numbers (see `attrs`);
//   fp16 (1 for fp16 workloads, else 0) and element_bytes (2 or 4);
//   the knobs (their first values in the reference launch);
//   the device limits max_work_group_size, max_work_item_size0..2,
//   local_mem_bytes, max_mem_alloc_bytes, compute_units, image_support
//   (1 or 0), image2d_max_width and image2d_max_height (pixels),
//   image2d_from_buffer (1 when the device lists
//   cl_khr_image2d_from_buffer), library_clblast and library_clml (1 when
//   the device's agent can call CLBlast or CLML: DeviceInfo.libraries),
//   khr_fp16 (1 when the device lists cl_khr_fp16: half arithmetic) (0
//   in calls without a device: Buffers, Flops, Bytes, launches);
//   the `let` values.
// Example (TOML):
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
// Inputs get uniform values in [-1, 1). Outputs hold NaNs before the
// reference's run and before each candidate's, and a NaN on one side only
// is a wrong element: a kernel that writes part of its output (a copy into
// a region of a bigger tensor) verifies when it writes exactly the
// elements its reference writes.
//
// Optional fields (the built-in specs use them all):
//   version = 2, rtol = 1e-4     as KernelTemplate::version() and rtol().
//   dtypes = ["fp32"]            the dtypes the template runs (default: all
//                                of the op's).
//   source = ["a.cl", "b.cl"]    several files, concatenated as they are.
//   preamble = ["common/dtype.cl", "common/epilogue.cl"]
//                                files put before the source, each followed
//                                by a newline. Files are looked up next to
//                                the spec, then among the built-in
//                                library's (common/dtype.cl,
//                                common/epilogue.cl, common/vector.cl, ...).
//   knobs = [{ name = "MWG", values = [16, 32] }, ...]
//                                knobs in this order (a [knobs] table
//                                lists them in name order).
//   [attrs]
//   act = { none = 0, relu = 1 } an attribute of the op read as a number,
//                                one for each of its values.
//   let = [{ name = "P", value = "(H - R) / SH + 1" }, ...]
//                                named values, each over the variables and
//                                earlier lets; computed when needed.
//   accepts = { expression = "R == 1 && S == 1", reason = "..." }
//                                which workloads of the op (and of
//                                `dtypes`) the template runs (Accepts), and
//                                the reason CheckWorkload gives for one it
//                                does not (or for another op).
//   workload_checks = [{ expression = "C % G == 0", reason = "..." }]
//                                conditions on the workload, checked in
//                                order after accepts and before the
//                                buffers' sizes (CheckWorkload).
//   constraints = [{ expression = "KWG % KWI == 0",
//                    reason = "KWI must divide KWG" }, ...]
//                                conditions on a config, checked in order
//                                (CheckConfig); a plain string is reported
//                                as "violates '<expression>'".
//   config_rechecks_workload = true
//                                CheckConfig checks accepts and the
//                                workload checks before the constraints.
//   launch_checks = false        CheckConfig skips the OpenCL launch rules
//                                it applies after the constraints (sizes
//                                at least 1, local sizes dividing global
//                                ones and within the device's limits).
//   features = [{ name = "log2_work_groups", value = "log2(groups)" }]
//                                cost-model features (DerivedFeatures).
//   shape_generic = true         every workload the template accepts runs
//                                with every config that passes the checks,
//                                so an emitted library may run an untuned
//                                shape with the config of the nearest tuned
//                                one; then give
//   default_config = "MWG=16,NWG=16,..."
//                                the config of shapes with no tuned entry.
//   [[buffers]] dtype = "workload" (default "fp32"), seed = 101
//                                (inputs default to seeds 1, 2, ... in
//                                order; outputs to 0).
//   [[buffers]] fill = "zero"    scratch the kernel keeps for itself (e.g.
//                                split-K partial sums and tile counters):
//                                zero-filled when the agent allocates it
//                                and after a failed kernel, never verified;
//                                a kernel that needs it zero at its next
//                                launch must leave it zero.
//   [kernel] and [reference]:
//     options = ["-DMWG={MWG}", { text = " -DTILE_H={TH}", when = "LT == 1" }]
//                                the build options: text pieces, each
//                                included when its `when` holds; replaces
//                                the knobs' defines.
//   [reference] source, preamble the reference's own files (else it shares
//                                the kernel's source).
//   [[images]]                   a buffer the kernel reads as a read-only
//                                image2d_t of RGBA float texels (CL_FLOAT;
//                                CL_HALF_FLOAT for fp16 buffers), a knob's
//                                choice:
//     name = "b_image"           a name [kernel].args may give (not a
//                                buffer's, variable's or other image's)
//     buffer = "B"               the [[buffers]] entry it reads
//     rows = "K"                 image height, pixels
//     row_elements = "N"         elements per buffer row: texel (x, y) is
//                                elements y * N + 4x .. 4x+3 (0 past the
//                                row's end); ceil(N / 4) texels wide
//     when = "IMG == 1"          optional: when 0, the arg is the plain
//                                buffer (the kernel is built for both, e.g.
//                                with options {text = "-DIMG", when = ...})
//                                rows, row_elements and when read no
//                                device limit (launches are computed
//                                without one): choose with a knob, and
//                                constrain it with image_support,
//                                image2d_max_width, image2d_max_height.
//                                Images are for [kernel].args only. The
//                                launch checks refuse a config whose image
//                                the device cannot hold.
//   [library]                    a library template: a call into a vendor
//                                library that the agent loads
//                                (DeviceInfo.libraries) in place of a
//                                generated kernel:
//     name = "clblast"
//     routine = "gemm"
//     args = ["M", "N", "K", "float:1", "A", "B", "C"]
//                                as [kernel].args (no images), in the order
//                                the agent's library backend documents for
//                                the routine.
//                                [kernel] is then optional: an epilogue run
//                                after the call and timed with it; its
//                                `when = "ACT != 0"` (optional, no device
//                                limit) skips it for configs where it is 0.
//                                `source` may then be left out when no
//                                [kernel] and a [reference] with its own
//                                source need none. The launch checks apply
//                                to the kernel only; source() (and so the
//                                source hash) ends with a comment naming
//                                the call.
// Reasons and options are text with {expression}s, each printed as an
// integer; {workload} prints the workload, {template} the template's name.
// A check holds when its value is finite and not 0.
//
// Hostile specs are refused, not trusted: names (template, op, dims, knobs,
// lets, buffers, kernels) must be identifiers [A-Za-z_][A-Za-z0-9_]* of at
// most 64 characters (knobs become -D defines, names land in emitted
// code); knob values lie within +-(2^31 - 1); the counts and sizes below
// are capped (expressions at ExpressionSet::kMaxExpressionLength); sizes an
// expression yields are truncated and clamped into 0..2^53 (a positive
// value gives at least 1, one that is not finite gives 1).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "base/pass_key.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/spec/knob_tables.h"
#include "kernels_templates/spec/let_plan.h"
#include "kernels_templates/spec/spec_model.h"

namespace tunefleet::templates {

// Caps on a spec (see above).
inline constexpr size_t kMaxSpecTextBytes = 1 << 20;
inline constexpr size_t kMaxSpecSourceBytes = 16 << 20;
inline constexpr size_t kMaxSpecNameLength = 64;
inline constexpr int kMaxSpecJsonDepth = 32;
// Keys (each segment of a dotted key) and values, and bytes of one string
// or key, counted on a spec's text before it is parsed.
inline constexpr size_t kMaxSpecValues = 1 << 16;
inline constexpr size_t kMaxSpecStringBytes = 64 << 10;
inline constexpr size_t kMaxSpecDims = 16;
inline constexpr size_t kMaxSpecKnobs = 32;
inline constexpr size_t kMaxSpecKnobValues = 1024;
inline constexpr size_t kMaxSpecBuffers = 32;
inline constexpr size_t kMaxSpecImages = 16;
inline constexpr size_t kMaxSpecConstraints = 64;
inline constexpr size_t kMaxSpecArgs = 64;
inline constexpr size_t kMaxSpecLets = 128;
inline constexpr size_t kMaxSpecFeatures = 64;
inline constexpr size_t kMaxSpecAttrs = 16;
inline constexpr size_t kMaxSpecFiles = 16;
inline constexpr int64_t kMaxSpecKnobValue = (int64_t{1} << 31) - 1;

// Immutable after loading; thread-safe (evaluation takes no lock).
class SpecTemplate : public KernelTemplate {
 public:
  // Reads a file's text by path. Errors: NOT_FOUND.
  using FileReader =
      absl::FunctionRef<absl::StatusOr<std::string>(const std::string& path)>;

  // Reads a spec file (.toml or .json) and the files it names. Errors:
  // NOT_FOUND for a missing file; INVALID_ARGUMENT naming the field or
  // expression that is wrong.
  static absl::StatusOr<std::unique_ptr<SpecTemplate>> Load(
      const std::string& path);
  // As Load, with files read by `read` (a spec's files are looked up next
  // to it, then as built-in library files).
  static absl::StatusOr<std::unique_ptr<SpecTemplate>> Load(
      const std::string& path, FileReader read);

  // From text: `format` is "toml" or "json"; `source` is the OpenCL text
  // of the kernel (the spec's "source" and "preamble" are then ignored)
  // and `reference_source` that of a reference with its own source (else
  // unused). Errors: INVALID_ARGUMENT naming the field, expression or cap
  // that is wrong.
  static absl::StatusOr<std::unique_ptr<SpecTemplate>> Parse(
      const std::string& spec, const std::string& format,
      const std::string& source, const std::string& reference_source = "");

  absl::string_view name() const override { return model_.name; }
  int version() const override { return model_.version; }
  absl::string_view op() const override { return model_.op; }
  const std::vector<Knob>& knobs() const override { return model_.knobs; }
  // The kernel's source; a library template's ends with a comment line
  // naming its call ("// tunefleet library call: clblast gemm(...)").
  absl::string_view source() const override { return source_; }

  bool Accepts(const Workload& workload) const override;
  absl::Status CheckWorkload(const Workload& workload,
                             const DeviceLimits& limits) const override;
  absl::Status CheckConfig(const KnobValues& config, const Workload& workload,
                           const DeviceLimits& limits) const override;
  // CheckConfig() without rendering a rejected config's reason.
  bool ConfigValid(const KnobValues& config, const Workload& workload,
                   const DeviceLimits& limits) const override;
  std::vector<BufferDesc> Buffers(const Workload& workload) const override;
  LaunchDesc Launch(const KnobValues& config,
                    const Workload& workload) const override;
  LaunchDesc ReferenceLaunch(const Workload& workload) const override;
  double Flops(const Workload& workload) const override;
  double Bytes(const Workload& workload) const override;
  double rtol() const override { return model_.rtol; }
  bool is_library() const override { return model_.library.has_value(); }
  std::vector<Feature> DerivedFeatures(
      const KnobValues& config, const Workload& workload,
      const DeviceLimits& limits) const override;

  // The spec and source texts, to ship to a remote server (Parse's
  // arguments). reference_source() is empty unless the reference has its
  // own source.
  const std::string& spec_text() const { return spec_text_; }
  const std::string& spec_format() const { return spec_format_; }
  const std::string& reference_source() const { return reference_source_; }
  // The op this template runs, for RegisterOp() when it is new.
  OpSpec Op() const;
  // The parsed spec, for tools that translate it (the emitter).
  const SpecModel& model() const { return model_; }

  // Use Load() or Parse().
  explicit SpecTemplate(base::PassKey<SpecTemplate>) {}
  // Its plans point into it.
  SpecTemplate(const SpecTemplate&) = delete;
  SpecTemplate& operator=(const SpecTemplate&) = delete;

 private:
  // Variable values of one evaluation, by slot.
  using Frame = absl::InlinedVector<double, 128>;
  // Which lets each group of expressions needs (see LetPlan).
  struct Plans {
    LetPlan shape;  // accepts, then each workload check
    LetPlan constraints;
    // As `constraints`, for configs whose runs are looked up: the lets of
    // the runs' checks left out.
    LetPlan constraints_by_run;
    LetPlan launch_rules, features, buffers, flops, bytes, kernel, reference;
    LetPlan lets;  // all of them, for reasons
  };

  void MakePlans();
  Frame NewFrame(const Workload& w) const;
  void SetLimits(const DeviceLimits& limits, Frame& frame) const;
  void SetKnobs(const KnobValues& config, Frame& frame) const;
  // Text of a reason or option (any let computed first).
  std::string Render(const TextTemplate& text, const Workload& w,
                     Frame& frame) const;
  bool AcceptsFrame(const Workload& w, Frame& frame) const;
  // Accepts and the workload checks.
  absl::Status CheckShape(const Workload& w, Frame& frame) const;
  absl::Status CheckBuffers(const Workload& w, const DeviceLimits& limits,
                            Frame& frame) const;
  absl::Status CheckLaunchRules(const KnobValues& config,
                                const DeviceLimits& limits, Frame& frame) const;
  // The kernel's images that the config uses against the device's image
  // support and sizes (part of the launch rules).
  absl::Status CheckImages(const KnobValues& config, const DeviceLimits& limits,
                           const Frame& frame) const;
  // Whether the [kernel] runs (a library spec's may not).
  bool KernelRuns(const Frame& frame) const;
  // The position of the first constraint the config fails, or -1.
  int FirstFailingConstraint(const int* digits, Frame& frame) const;
  // Sets `frame` (a NewFrame() of `w`) up for `config` and returns the
  // position of the first constraint the config fails, or -1; errors: a
  // config of the wrong length, or a workload the config's recheck
  // refuses.
  absl::StatusOr<int> FailingConstraint(const KnobValues& config,
                                        const Workload& w,
                                        const DeviceLimits& limits,
                                        Frame& frame) const;
  absl::Status ConfigError(const KnobValues& config,
                           absl::string_view why) const;
  // A frame of the workload and config with the lets of `plan` computed.
  Frame LaunchFrame(const LetPlan& plan, const KnobValues& config,
                    const Workload& w) const;
  // Sets the kernel part of `l` (source, name, geometry, args, options).
  void AddKernel(const SpecKernel& k, const Frame& frame, const Workload& w,
                 LaunchDesc& l) const;
  // One argument's value; images where their `when` holds, else buffers.
  ArgDesc MakeArg(const SpecArg& a, const Frame& frame) const;
  std::string BuildOptions(const SpecKernel& k, const Frame& frame,
                           const Workload& w) const;

  SpecModel model_;
  KnobTables tables_;
  std::vector<KnobTables::CheckRun> constraint_runs_;
  Plans plans_;
  std::string spec_text_, spec_format_, reference_source_;
  std::string source_;  // what source() returns
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_TEMPLATE_H_
