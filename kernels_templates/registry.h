// The kernel templates a process knows: the built-in ones and any
// registered at run time (a user's template spec, a test's template).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_
#define TUNEFLEET_KERNELS_TEMPLATES_REGISTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"

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

class PendingTemplate;

// Parses a user's template spec (spec/spec_template.h; `reference_source`
// for a reference with its own source) without registering anything.
// Errors: the spec's errors; ALREADY_EXISTS when another template has the
// name; RESOURCE_EXHAUSTED when the registry is full (kMaxRegisteredTemplates
// registered templates).
absl::StatusOr<PendingTemplate> ParseUserTemplate(
    const std::string& spec, const std::string& format,
    const std::string& source, const std::string& reference_source = "");

// Registers a pending template's op (when new) and the template, and
// returns the registered template: pending.get(), or the template of the
// same name and source that was registered since it was parsed (then
// pending's is dropped). Errors: ALREADY_EXISTS (another template took the
// name, or the op with other dims, meanwhile); RESOURCE_EXHAUSTED past
// kMaxRegisteredTemplates. Nothing is registered on an error.
absl::StatusOr<const KernelTemplate*> CommitUserTemplate(
    PendingTemplate pending);

// A user's template spec, parsed and not registered yet
// (ParseUserTemplate): the registered template of the same name and source,
// or a new one that CommitUserTemplate() registers once the submission that
// brings it is accepted, so that a refused submission registers nothing.
// Move-only.
class PendingTemplate {
 public:
  PendingTemplate(PendingTemplate&&) = default;
  PendingTemplate& operator=(PendingTemplate&&) = default;

  // The template to check the submission against.
  const KernelTemplate* get() const {
    return fresh_ != nullptr ? fresh_.get() : existing_;
  }
  // Whether the registry holds it already (then there is nothing to
  // commit).
  bool registered() const { return fresh_ == nullptr; }
  // The template's op when the registry does not know it yet (a workload
  // of it is made with Workload::Create(*new_op(), ...)), else null. Valid
  // while this object lives.
  const OpSpec* new_op() const { return new_op_ ? &*new_op_ : nullptr; }

 private:
  friend absl::StatusOr<PendingTemplate> ParseUserTemplate(const std::string&,
                                                           const std::string&,
                                                           const std::string&,
                                                           const std::string&);
  friend absl::StatusOr<const KernelTemplate*> CommitUserTemplate(
      PendingTemplate);
  PendingTemplate() = default;

  const KernelTemplate* existing_ = nullptr;
  std::unique_ptr<KernelTemplate> fresh_;
  std::optional<OpSpec> new_op_;
};

// ParseUserTemplate and CommitUserTemplate at once: parses a user's
// template spec, registers its op when new and the template, and returns
// it. The same template (name and source hash)
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
