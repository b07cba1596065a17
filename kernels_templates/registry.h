// The built-in kernel templates, looked up by name or by op.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_
#define TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// All built-in templates; they live for the whole program.
const std::vector<const KernelTemplate*>& BuiltinTemplates();

// The template called `name`, or, when `name` is empty, the default
// template of `op`. Errors: NOT_FOUND listing what exists.
absl::StatusOr<const KernelTemplate*> FindTemplate(absl::string_view op,
                                                   absl::string_view name);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_
