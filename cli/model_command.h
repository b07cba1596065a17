// ONNX models on the command line:
//   tunefleet tasks --onnx FILE --input-shape NAME=1,3,48,192 [--json]
//     lists the model's distinct tuning tasks (op, shape, count, FLOPs) and
//     the ops it cannot tune;
//   tunefleet tune --onnx FILE --input-shape ... --trials-per-task N
//     tunes every task, heaviest first, one progress line per task, and
//     reports the model's estimated latency (sum over tasks of kernel time
//     x count) before (naive reference kernels) and after tuning.
#ifndef TUNEFLEET_CLI_MODEL_COMMAND_H_
#define TUNEFLEET_CLI_MODEL_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/tune_command.h"
#include "onnx_import/onnx_import.h"

namespace tunefleet::cli {

struct TasksOptions {
  std::string onnx;
  std::vector<std::string> input_shapes;  // NAME=D1,D2,...
  bool json = false;
};

CLI::App* AddTasksCommand(CLI::App& app, TasksOptions& options);
int RunTasks(const TasksOptions& options);

// Imports the model named by --onnx with the --input-shape values.
absl::StatusOr<onnx_import::ModelTasks> LoadModelTasks(
    const std::string& onnx, const std::vector<std::string>& input_shapes);

// `tunefleet tune --onnx ...` (options from TuneOptions: onnx,
// input_shapes, trials_per_task and the usual tune flags).
int RunModelTune(const TuneOptions& options);

// A task's line of progress in `tune --onnx`: "[ 3/53] conv2d N=1 C=16 ...
// fp32 act=relu  x2   12.30 GFLOP/s   0.0420 ms  naive 4.21 GFLOP/s, tuned
// 2.9x faster  (40 trials, 12 s)", with the op and the whole canonical
// workload (padded to `workload_width` characters), so no two tasks look
// alike. `p`: the task's job's last progress; `seconds`: its tuning time.
std::string TaskLine(int index, size_t total, size_t workload_width,
                     const onnx_import::ModelTask& task,
                     const tunefleet::v1::JobProgress& p, double seconds);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MODEL_COMMAND_H_
