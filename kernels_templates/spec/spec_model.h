// The parsed form of a template spec (spec_template.h documents the
// format): what SpecTemplate evaluates, and what the emitter translates to
// C++ for shape-generic templates. Every number is an expression handle of
// `expressions`, whose variables are laid out in slots (see Slots).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_MODEL_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels_templates/kernel_template.h"
#include "kernels_templates/spec/expression.h"
#include "kernels_templates/spec/text_template.h"

namespace tunefleet::templates {

// The device limits expressions read, in slot order (DeviceLimits; the
// flags read 1 or 0). New limits go at the end: the emitted runtime
// (emitter/runtime/tuned_runtime.cc, Limits()) fills them in this order.
inline constexpr const char* kSpecLimitNames[] = {
    "max_work_group_size", "max_work_item_size0",
    "max_work_item_size1", "max_work_item_size2",
    "local_mem_bytes",     "max_mem_alloc_bytes",
    "compute_units",       "image_support",
    "image2d_max_width",   "image2d_max_height",
    "image2d_from_buffer", "library_clblast",
    "library_clml",        "khr_fp16"};
inline constexpr int kNumSpecLimits = 14;

// A string attribute of the op read as a number: value names to numbers.
struct SpecAttr {
  std::string name;
  std::vector<std::pair<std::string, double>> values;
};

// A named value: a `let` (computed before what reads it) or a feature.
struct SpecValue {
  std::string name;
  int expression = -1;
};

// A condition and the reason reported when it does not hold (its value is
// zero or not finite).
struct SpecCheck {
  int expression = -1;
  TextTemplate reason;
};

// A piece of a kernel's build options, included when `when` holds (-1:
// always).
struct SpecOption {
  TextTemplate text;
  int when = -1;
};

struct SpecArg {
  enum Kind { kBuffer, kInt, kFloat, kImage };
  Kind kind = kInt;
  std::string buffer;   // kBuffer; kImage: the image's name
  int expression = -1;  // kInt, kFloat
  int image = -1;       // kImage: index into SpecModel::images
};

// An [[images]] entry: a buffer read by the kernel as an RGBA float
// image2d_t (ArgDesc::Image), when `when` holds (-1: always); else the
// kernel gets the plain buffer.
struct SpecImage {
  std::string name;       // what [kernel].args names
  std::string buffer;     // a [[buffers]] name
  int rows = -1;          // expression: image height, pixels
  int row_elements = -1;  // expression: elements per buffer row
  int when = -1;
};

// The tunable kernel or the reference: entry point, source, NDRange,
// arguments and build options.
struct SpecKernel {
  std::string name;
  std::string source;  // the OpenCL text, preamble included
  std::vector<int> global, local;
  std::vector<SpecArg> args;
  bool has_options = false;  // else: `defines` (knobs by default)
  std::vector<SpecOption> options;
  // [kernel] of a library spec: runs only when this holds (-1: always).
  int when = -1;
};

// [library]: the vendor-library call of a library template (LibraryDesc).
// Its args are ints, floats and buffers, as a kernel's.
struct SpecLibrary {
  std::string name;
  std::string routine;
  std::vector<SpecArg> args;
};

struct SpecBuffer {
  std::string name;
  int elements = -1;
  bool output = false;
  // fill = "zero": scratch the kernel keeps for itself (split-K's partial
  // sums and tile counters); zero-filled when allocated, not verified.
  bool zero_fill = false;
  uint32_t seed = 0;
  bool workload_dtype = false;  // else fp32
};

// Where each kind of variable lives: dims, attrs, the dtype's values,
// knobs, device limits, then lets, in the order of their lists.
struct SpecSlots {
  int num_dims = 0, num_attrs = 0, num_knobs = 0, num_lets = 0;
  int dim(int i) const { return i; }
  int attr(int i) const { return num_dims + i; }
  int fp16() const { return num_dims + num_attrs; }
  int element_bytes() const { return fp16() + 1; }
  int knob(int i) const { return element_bytes() + 1 + i; }
  int limit(int i) const { return knob(num_knobs) + i; }
  int let(int i) const { return limit(kNumSpecLimits) + i; }
  int size() const { return let(num_lets); }
};

struct SpecModel {
  std::string name, op;
  int version = 1;
  double rtol = 1e-4;
  std::vector<std::string> dims;
  std::vector<SpecAttr> attrs;
  std::vector<Dtype> dtypes;  // empty: every dtype of the op
  std::vector<Knob> knobs;
  std::vector<std::string> defines;  // names passed as -D without options
  std::vector<SpecValue> lets, features;
  // accepts: false when the spec has no `accepts` (then any workload of
  // the op); its expression may be -1 (only a reason).
  bool has_accepts = false;
  SpecCheck accepts;
  std::vector<SpecCheck> workload_checks, constraints;
  std::vector<SpecBuffer> buffers;
  std::vector<SpecImage> images;
  int flops = -1, bytes = -1;
  // A library spec: its call, and [kernel] an optional epilogue
  // (has_kernel false: none; kernel is then empty).
  std::optional<SpecLibrary> library;
  bool has_kernel = true;
  SpecKernel kernel, reference;
  bool launch_checks = true;
  bool config_rechecks_workload = false;
  bool shape_generic = false;
  KnobValues default_config;
  SpecSlots slots;
  std::unique_ptr<ExpressionSet> expressions;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_MODEL_H_
