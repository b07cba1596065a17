// ONNX models on the command line:
//   tunefleet tasks --onnx FILE --input-shape NAME=1,3,48,192 [--json]
//     lists the model's distinct tuning tasks (op, shape, count, FLOPs) and
//     the ops it cannot tune;
//   tunefleet tune --onnx FILE --input-shape ... [--trials T |
//                  --trials-per-task N] [--task-scheduler gradient]
//     submits the model as one model job (SubmitModelJob; its tasks built by
//     cli/model_request.h), follows it with a progress line of its estimated
//     latency, and reports each task and the model's estimated latency (sum
//     over workloads of kernel time x count) before (naive reference
//     kernels) and after tuning.
#ifndef TUNEFLEET_CLI_MODEL_COMMAND_H_
#define TUNEFLEET_CLI_MODEL_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/model_request.h"
#include "cli/tune_command.h"
#include "nlohmann/json.hpp"
#include "onnx_import/onnx_import.h"

namespace tunefleet::cli {

struct TasksOptions {
  std::string onnx;
  std::vector<std::string> input_shapes;  // NAME=D1,D2,...
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddTasksOptions(CLI::App* cmd, TasksOptions& options);
int RunTasks(const TasksOptions& options);

// Imports the model named by --onnx with the --input-shape values.
absl::StatusOr<onnx_import::ModelTasks> LoadModelTasks(
    const std::string& onnx, const std::vector<std::string>& input_shapes);

// `tunefleet tune --onnx ...` (options from TuneOptions: onnx,
// input_shapes, the budget flags and the usual tune flags). Exit: 0 when the
// model job ended done, 1 when it failed or was cancelled or the connection
// was lost (the message says how to follow it), 2 for bad flags or a bad
// model, 130 after Ctrl-C (with the embedded fleet the model job is
// cancelled; with --server it goes on there).
int RunModelTune(const TuneOptions& options);

// A task's line in `tune --onnx`'s results: "[ 3/53] conv2d N=1 C=16 ...
// fp32 act=relu  x2   12.30 GFLOP/s   0.0420 ms  naive 4.21 GFLOP/s, tuned
// 2.9x faster  (40/48 trials)", with the op and the whole canonical workload
// (padded to `workload_width` characters), so no two tasks look alike.
// `t`: the task's progress in the model job (its job's progress and the
// trials granted to it).
std::string TaskLine(int index, size_t total, size_t workload_width,
                     const onnx_import::ModelTask& task,
                     const tunefleet::v1::ModelTaskProgress& t);

// The lines that say which tasks the server skipped (e.g. no config of
// their template on the device), grouped by template: "skipped 3 of 12
// tasks, not tuned on this device:", then "  clblast_conv2d x2: REASON"
// with the first task's reason; "" when none was.
std::string SkippedTasksText(
    const tunefleet::v1::SubmitModelJobRequest& request,
    const google::protobuf::RepeatedPtrField<tunefleet::v1::SkippedTask>&
        skipped);

// A task of the model job that got no trial: the budget ran out before the
// task scheduler reached it.
struct UntriedTask {
  uint32_t task_index = 0;
  std::string workload_key;
  std::string template_name;
  uint32_t trials_granted = 0;
};
// The model job's tasks (of `last`, its final progress) with no trial done,
// in task order; skipped tasks are not among them.
std::vector<UntriedTask> UntriedTasks(const onnx_import::ModelTasks& model,
                                      const ModelJobPlan& plan,
                                      const tunefleet::v1::JobProgress& last);
// "106 of 126 tasks got no trial (...):" and a line per task ("  task 5
// conv2d ... [conv2d_direct]"); "" when every task got one.
std::string UntriedTasksText(const std::vector<UntriedTask>& untried,
                             size_t tasks);
// The warning `tune --onnx` prints before it starts when `trials` cannot
// give each of `tuned_tasks` tasks (of `workloads` workloads) one trial:
// "warning: a budget of 20 trials for 126 tasks leaves at least 106 tasks
// without a trial; --trials 126 (or --trials-per-task 3: 60 workloads)
// gives each task one"; "" otherwise.
std::string BudgetWarning(uint32_t trials, size_t tuned_tasks,
                          size_t workloads);

// `tune --onnx --json`: the model job's progress as every JSON shows a job
// (contract::ContractJson: job_id, state, trials_done, trials_total, errors,
// model {model_name, task_scheduler, latency_ns, naive_latency_ns, tasks,
// task_progress, skipped, latency_history, ...}, ...), and what only this
// run knows: model_file, library_candidates, workloads [per imported
// workload: {workload_key, count, flops, reference_time_ns, deployed
// (template name, "reference" or null), speedup_vs_reference, tasks
// [{task_index, template_name, job_id, state, trials_done, trials_granted,
// stopped_reason, best (TuningRecord or null)} or {task_index,
// template_name, skipped}]}], tasks_without_trials [{task_index,
// workload_key, template_name, trials_granted}], elapsed_s, coverage,
// trials_per_task (when given), database (embedded runs). `last`: the model
// job's final progress.
nlohmann::json ModelTuneJson(
    const TuneOptions& options, const onnx_import::ModelTasks& model,
    const ModelJobPlan& plan,
    const tunefleet::v1::SubmitModelJobResponse& submitted,
    const tunefleet::v1::JobProgress& last, double elapsed_s);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MODEL_COMMAND_H_
