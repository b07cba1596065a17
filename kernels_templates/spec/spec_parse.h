// Parsing a template spec's JSON form (spec_template.h documents the
// fields) into a SpecModel. Internal to the spec engine.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_PARSE_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_PARSE_H_

#include <string>

#include "absl/status/statusor.h"
#include "kernels_templates/spec/spec_json.h"
#include "kernels_templates/spec/spec_model.h"

namespace tunefleet::templates {

// The model of `spec`, with `source` as the kernel's OpenCL text and
// `reference_source` as the reference's when it has its own. The default
// config is left empty (it needs the knobs' parsing of KernelTemplate).
// Errors: INVALID_ARGUMENT "template spec: ..." naming the field, or the
// expression's error naming its field.
absl::StatusOr<SpecModel> ParseSpecModel(const spec_json::json& spec,
                                         const std::string& source,
                                         const std::string& reference_source);

// Parsing of the checks, buffers, values and kernels (spec_parse_launch.cc),
// once the model's variables and lets are set. ParseSpecKernels runs after
// ParseSpecImages and ParseSpecLibrary (a library spec's [kernel] is
// optional).
absl::Status ParseSpecChecks(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecBuffers(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecValues(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecKernels(const spec_json::json& spec,
                              const std::string& source,
                              const std::string& reference_source,
                              SpecModel& model);

// [[images]] (spec_parse_images.cc), after the buffers: each a name that no
// buffer, image or variable has, a [[buffers]] name, `rows` and
// `row_elements` expressions and an optional `when`. Errors:
// INVALID_ARGUMENT "template spec: images...: ..." naming the field.
absl::Status ParseSpecImages(const spec_json::json& spec, SpecModel& model);

// [library] (spec_parse_library.cc), after the images: name, routine and
// args. Errors: INVALID_ARGUMENT "template spec: library...: ...".
absl::Status ParseSpecLibrary(const spec_json::json& spec, SpecModel& model);

// One item of a kernel's or library's `args` (`field`: "kernel",
// "reference", "library"): a buffer's name, an image's name (only where
// `images_allowed`), an int expression, or "float:<expression>".
absl::StatusOr<SpecArg> ParseSpecArg(const std::string& arg,
                                     const std::string& field,
                                     bool images_allowed, SpecModel& model);

// OK when expression `handle` reads no device limit (launches are computed
// without the device, so a limit would read 0 there). Errors:
// INVALID_ARGUMENT "template spec: <what>: reads <limit>, ...".
absl::Status CheckReadsNoLimit(const SpecModel& model, int handle,
                               const std::string& what);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_PARSE_H_
