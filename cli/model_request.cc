#include "cli/model_request.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cli/tune_command.h"
#include "contract/model_job_fields.h"
#include "contract/names.h"
#include "kernels_templates/registry.h"
#include "trial/trial_request.h"

namespace tunefleet::cli {

absl::StatusOr<uint32_t> ModelTrialBudget(const TuneOptions& o,
                                          size_t workloads) {
  if (o.trials_given && o.trials_per_task > 0) {
    return absl::InvalidArgumentError(
        "give --trials (the whole model's budget) or --trials-per-task (per "
        "workload), not both");
  }
  uint64_t budget = o.trials;
  if (!o.trials_given) {
    const uint64_t per_workload =
        o.trials_per_task > 0 ? o.trials_per_task : kDefaultTrialsPerWorkload;
    budget = per_workload * workloads;
  }
  if (budget == 0 || budget > kMaxModelTrials) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model's trial budget is ", budget, " trials",
        o.trials_given
            ? ""
            : absl::StrCat(" (--trials-per-task x ", workloads, " workloads)"),
        "; it must be 1 to ", kMaxModelTrials));
  }
  return static_cast<uint32_t>(budget);
}

std::vector<std::string> LibraryTemplates(const templates::Workload& workload) {
  std::vector<std::string> names;
  for (const templates::KernelTemplate* t : templates::AllTemplates()) {
    if (t->op() == workload.op() && t->is_library() && t->Accepts(workload)) {
      names.emplace_back(t->name());
    }
  }
  return names;
}

absl::StatusOr<ModelJobPlan> BuildModelJobRequest(
    const TuneOptions& o, const onnx_import::ModelTasks& model) {
  for (const auto& [given, flag] :
       {std::pair<bool, const char*>{!o.template_name.empty(), "--template"},
        {o.early_stop > 0, "--early-stop"},
        {o.skip_reference, "--skip-reference"}}) {
    if (given) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag,
          " does not apply to --onnx: a model's tasks run their ops' "
          "templates, each timed against its naive kernel, and the task "
          "scheduler stops the tasks that no longer improve"));
    }
  }
  if (model.tasks.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.onnx,
                     " has no op tunefleet can tune (`tunefleet "
                     "tasks --onnx` lists what it cannot)"));
  }
  TUNEFLEET_RETURN_IF_ERROR(contract::ParseStrategy(o.strategy).status());
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::TaskScheduler scheduler,
                             contract::ParseTaskScheduler(o.task_scheduler));
  TUNEFLEET_ASSIGN_OR_RETURN(uint32_t budget,
                             ModelTrialBudget(o, model.tasks.size()));
  ModelJobPlan plan;
  tunefleet::v1::SubmitModelJobRequest& r = plan.request;
  r.set_model_name(std::filesystem::path(o.onnx).filename().string());
  for (size_t i = 0; i < model.tasks.size(); ++i) {
    const onnx_import::ModelTask& task = model.tasks[i];
    std::vector<std::string> templates = {""};  // the op's default
    if (!o.no_library) {
      for (std::string& name : LibraryTemplates(task.workload)) {
        templates.push_back(std::move(name));
      }
    }
    for (const std::string& name : templates) {
      tunefleet::v1::ModelTask* t = r.add_tasks();
      *t->mutable_workload() = trial::WorkloadToProto(task.workload);
      t->set_template_name(name);
      t->set_weight(static_cast<uint32_t>(task.count));
      plan.workload_of_task.push_back(i);
    }
  }
  r.set_task_scheduler(scheduler);
  r.set_batch_trials(o.batch_trials);
  // The single-job flags, exactly as a single job's request carries them
  // (trials: the budget).
  const tunefleet::v1::SubmitJobRequest job =
      JobRequest(o, model.tasks.front().workload, budget);
  contract::SetJobWideFields(job, r);
  return plan;
}

}  // namespace tunefleet::cli
