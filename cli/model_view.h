// How the CLI shows a model job (a JobProgress with `model` set;
// docs/MODEL_JOBS.md): its progress line while it runs, its row in the jobs
// table, its tasks as a table and as lines when they change, its estimated
// latency (its JSON is contract::ContractJson, contract/json.h).
#ifndef TUNEFLEET_CLI_MODEL_VIEW_H_
#define TUNEFLEET_CLI_MODEL_VIEW_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

// A time in ns as milliseconds with 3 significant digits: "4.42", "0.0512",
// "123".
std::string MsText(double ns);

// "trials 120/424  est. latency 8.49 -> 5.10 ms (1.7x)  tasks stopped 12/53":
// trials done of the budget, the naive and the tuned estimated latency
// (ModelProgress.naive_latency_ns, latency_ns), "est. latency -" before any,
// "(partial)" after it while a workload has no time yet.
std::string ModelProgressLine(const tunefleet::v1::JobProgress& p);

// "estimated latency (sum of kernel time x count): naive 8.490 ms, tuned
// 4.420 ms (1.9x)", with " (some tasks have no figure)" when incomplete.
std::string ModelLatencyText(const tunefleet::v1::ModelProgress& m);

// The tuned plan measured end to end once the budget was spent
// (ModelProgress.measured; docs/TUNING.md, "Measured latency"):
// "measured latency (end to end on agent-1, 20 runs, record off): median
// 4.51 ms, p10 4.40 ms, p90 4.70 ms; estimated 4.42 ms (measured 1.02x
// the estimate)", then where the runs with device buffers were measured
// "; on the device (inputs and outputs in device buffers, 20 runs): median
// 3.90 ms, p10 3.85 ms, p90 4.02 ms"; or "measured latency: missing:
// REASON"; "" before the job tried.
std::string MeasuredLatencyText(const tunefleet::v1::ModelProgress& m);

// The measured run's layers: LAYER (plan step), ENTRY (the chosen entry:
// tuned, reference, library), MEASURED MS, SHARE (of the layers' summed
// time), EST MS (its record's time), TRIALS (done by the tasks of its
// workload), SPEEDUP (naive reference time / best time of its workload's
// tasks), WORKLOAD, NODES; "" without a measured run.
std::string ModelLayerTable(const tunefleet::v1::JobProgress& p);

// One row of ModelLayerTable, as figures (`tune --onnx --json`'s "layers").
struct ModelLayerRow {
  const tunefleet::v1::MeasuredLayer* layer = nullptr;
  double share = 0;     // of the layers' summed measured time, 0..1
  int64_t trials = -1;  // -1: no task of its workload
  double speedup = 0;   // over naive; 0: unknown
};
std::vector<ModelLayerRow> ModelLayerRows(const tunefleet::v1::JobProgress& p);

// The jobs table's WORKLOAD cell: the job's workload key, or for a model
// job "model NAME (N tasks)".
std::string JobWorkloadCell(const tunefleet::v1::JobProgress& p);
// The jobs table's BEST cell: "12.30 GFLOP/s" for a job, "est 4.42 ms" (the
// model's estimated latency) for a model job, "4.51 ms (est 4.42)" once
// measured end to end ("4.51 ms (est 4.42, on device 3.90)" with the
// median of the runs with device buffers), "-" before any.
std::string JobBestCell(const tunefleet::v1::JobProgress& p);

// A task of a model job: its workload and template, "conv2d N=1 ... fp32
// [clblast_conv2d]".
std::string ModelTaskName(const tunefleet::v1::ModelTaskProgress& t);

// The model job's tasks: TASK (index), STATE, TRIALS (done/granted),
// WEIGHT, BEST (ms), NAIVE (ms), TEMPLATE, WORKLOAD, STOPPED (why it gets
// no more trials), in task order; then a line per skipped task with why.
std::string ModelTaskTable(const tunefleet::v1::JobProgress& p);

// Lines for the tasks of a model job that changed since the last call: a
// new best time ("task 3 conv2d ... [conv2d_direct]: best 0.05 ms (naive
// 0.1 ms) after 3/4 trials"), or stopped by the task scheduler. The first call
// reports the tasks that already have a best. Not thread-safe.
class ModelTaskChanges {
 public:
  std::vector<std::string> Update(const tunefleet::v1::JobProgress& p);

 private:
  struct Seen {
    double best_ns = 0;
    bool stopped = false;
  };
  std::map<uint32_t, Seen> seen_;  // by task index
};

// A model job's progress on `out` (stderr for the commands): one rewritten
// ModelProgressLine on a terminal; otherwise a line when the estimated
// latency (once every workload has a time) moved by at least 1%, when
// tasks stopped (at most once a second), and at least every kQuietPeriod
// while trials are done, so logs stay short. With
// `task_lines`, also ModelTaskChanges' lines. Why the job waits gets a line
// of its own each time it changes. Not thread-safe.
class ModelProgressPrinter {
 public:
  static constexpr std::chrono::seconds kQuietPeriod{5};

  ModelProgressPrinter(bool quiet, bool task_lines, FILE* out = stderr);
  void Update(const tunefleet::v1::JobProgress& p) {
    Update(p, std::chrono::steady_clock::now());
  }
  void Update(const tunefleet::v1::JobProgress& p,
              std::chrono::steady_clock::time_point now);
  // Ends the rewritten line on a terminal.
  void End();

 private:
  void Print(const std::string& line);  // a whole line, closing an open one

  bool quiet_;
  bool task_lines_;
  FILE* out_;
  bool tty_;
  bool line_open_ = false;
  bool any_ = false;  // a progress line was printed
  uint32_t last_done_ = 0;
  double last_latency_ = 0;
  bool last_complete_ = false;
  uint32_t last_stopped_ = 0;
  std::chrono::steady_clock::time_point last_time_;
  std::string waiting_;
  ModelTaskChanges changes_;
};

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_MODEL_VIEW_H_
