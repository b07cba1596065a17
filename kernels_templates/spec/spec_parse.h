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
// once the model's variables and lets are set.
absl::Status ParseSpecChecks(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecBuffers(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecValues(const spec_json::json& spec, SpecModel& model);
absl::Status ParseSpecKernels(const spec_json::json& spec,
                              const std::string& source,
                              const std::string& reference_source,
                              SpecModel& model);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_SPEC_PARSE_H_
