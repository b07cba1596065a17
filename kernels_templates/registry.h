// The kernel templates a process knows: the built-in ones and any
// registered at run time (a user's template spec, a test's template).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_
#define TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"

namespace tunefleet::templates {

// Most templates a process registers at run time (users' specs): each
// stays until the process ends, so a server must not grow without bound.
inline constexpr size_t kMaxRegisteredTemplates = 1024;

// All known templates, built-in first (builtin_templates.h gives their
// order). Templates live until the process ends. Thread-safe.
std::vector<const KernelTemplate*> AllTemplates();

// Adds a template. Errors: ALREADY_EXISTS when its name is taken;
// RESOURCE_EXHAUSTED past kMaxRegisteredTemplates.
absl::Status RegisterTemplate(std::unique_ptr<KernelTemplate> tmpl);

// Parses a user's template spec (spec/spec_template.h; `reference_source`
// for a reference with its own source), registers its op when new and the
// template, and returns it. The same template (name and source hash)
// registered again, concurrently too, returns the first. Errors: the
// spec's errors; ALREADY_EXISTS when another template has the name;
// RESOURCE_EXHAUSTED past kMaxRegisteredTemplates.
absl::StatusOr<const KernelTemplate*> RegisterSpecTemplate(
    const std::string& spec, const std::string& format,
    const std::string& source, const std::string& reference_source = "");

// Loads a template spec file (.toml or .json, and the OpenCL source it
// names; SpecTemplate::Load) and registers it as RegisterSpecTemplate()
// does. Returns the registered template. Errors: those of both.
absl::StatusOr<const KernelTemplate*> RegisterSpecFile(const std::string& path);

// The template called `name`, or, when `name` is empty, the first template
// of `op`. Errors: NOT_FOUND listing what exists.
absl::StatusOr<const KernelTemplate*> FindTemplate(absl::string_view op,
                                                   absl::string_view name);

// The template called `name` if it accepts the workload, or, when `name`
// is empty, the first template that does (special cases such as 1x1
// convolutions through GEMM come before general ones). Errors: NOT_FOUND
// listing the templates of the op.
absl::StatusOr<const KernelTemplate*> FindTemplateFor(const Workload& workload,
                                                      absl::string_view name);

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_
