// What `tunefleet tune --onnx` submits: the model's tasks as one
// SubmitModelJobRequest (docs/MODEL_JOBS.md) and its trial budget from
// --trials or --trials-per-task.
#ifndef TUNEFLEET_CLI_MODEL_REQUEST_H_
#define TUNEFLEET_CLI_MODEL_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/workload.h"
#include "onnx_import/onnx_import.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

struct TuneOptions;  // cli/tune_command.h

// The budget of a model per distinct workload when neither --trials nor
// --trials-per-task is given.
inline constexpr uint32_t kDefaultTrialsPerWorkload = 20;
// The most trials a model job may have (SubmitModelJobRequest.trials).
inline constexpr uint32_t kMaxModelTrials = 1000000;

// The model's whole trial budget: --trials as given; else --trials-per-task
// (or kDefaultTrialsPerWorkload) x `workloads`, the model's distinct
// workloads (its library templates' tasks share their workload's). Errors:
// INVALID_ARGUMENT when both flags are given (naming both), or when the
// budget is 0 or over kMaxModelTrials.
absl::StatusOr<uint32_t> ModelTrialBudget(const TuneOptions& options,
                                          size_t workloads);

// The library templates that run `workload` (KernelTemplate::Accepts), in
// registry order: calls into vendor libraries (e.g. clblast_conv2d, and
// clblast_conv2d_1x1 for a 1x1 convolution only), tuned beside the op's
// generated template.
std::vector<std::string> LibraryTemplates(const templates::Workload& workload);

// A model job's request and where each of its tasks comes from.
struct ModelJobPlan {
  tunefleet::v1::SubmitModelJobRequest request;
  // Per task of the request: the index of its workload in the imported
  // ModelTasks.tasks.
  std::vector<size_t> workload_of_task;
};

// The request for `model` (imported from options.onnx): per imported task,
// one task of the op's default template (template_name empty) and, unless
// --no-library, one per library template that runs it, each weighted by the
// task's count; the budget (ModelTrialBudget), --task-scheduler,
// --batch-trials and the single-job flags (strategy, seed, priority,
// deadline, device key, timing, --no-transfer) as JobRequest() sets them.
// The model is named by the file's name. Errors: INVALID_ARGUMENT for an
// unknown --strategy or --task-scheduler, a flag that does not apply to a
// model (--template, --early-stop, --skip-reference), a model without
// tasks, the budget's errors.
absl::StatusOr<ModelJobPlan> BuildModelJobRequest(
    const TuneOptions& options, const onnx_import::ModelTasks& model);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MODEL_REQUEST_H_
