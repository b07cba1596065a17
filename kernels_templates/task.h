// The task: what is tuned (docs/ARCHITECTURE.md, Words).
#ifndef TUNEFLEET_KERNELS_TEMPLATES_TASK_H_
#define TUNEFLEET_KERNELS_TEMPLATES_TASK_H_

#include <string>

#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"

namespace tunefleet::templates {

// A task: a workload and the kernel template that runs it, the unit a
// search space is built for. A job tunes one task on one device key
// (store::JobParams); a model has many (onnx_import::ModelTask, one per
// distinct workload). `tmpl` points into the template registry
// (registry.h), whose templates live until the process ends; null: no
// template runs the workload (an imported model's task may have none).
struct Task {
  Workload workload;
  const KernelTemplate* tmpl = nullptr;

  // The template's name; empty when `tmpl` is null.
  std::string TemplateName() const {
    return tmpl != nullptr ? std::string(tmpl->name()) : std::string();
  }
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_TASK_H_
