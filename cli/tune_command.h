// `tunefleet tune`: submits one tuning job (to --server, or to the embedded
// default), shows its progress and reports the best config.
#ifndef TUNEFLEET_CLI_TUNE_COMMAND_H_
#define TUNEFLEET_CLI_TUNE_COMMAND_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/common.h"
#include "cli/embedded.h"
#include "cli/stop_signal.h"
#include "kernels_templates/workload.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

struct TuneOptions {
  std::string op;     // empty: the spec template's op, else gemm
  std::string shape;  // "M=512,N=512,K=512"
  std::string dtype = "fp32";
  // A whole ONNX model instead of one workload (cli/model_command.h).
  std::string onnx;
  std::vector<std::string> input_shapes;
  // With --onnx, the model's trial budget (cli/model_request.h): `trials`
  // when --trials was given (`trials_given`), else `trials_per_task` (0:
  // not given) x the model's workloads.
  uint32_t trials_per_task = 0;
  bool trials_given = false;
  std::string task_scheduler = "gradient";  // with --onnx
  uint32_t batch_trials = 0;  // with --onnx; 0: the server chooses
  std::string template_name;  // empty: the op's default
  uint32_t trials = 100;
  uint32_t deadline_s = 0;  // 0: none
  double timeout_ms = 0;    // per trial; 0: the server's default
  std::string strategy = "xgb";
  std::string server;               // empty: embedded default
  client::ChannelFiles connection;  // token and TLS for --server
  std::string device_key;           // empty: the only connected key
  uint64_t seed = 0;
  int priority = 0;
  bool skip_reference = false;
  uint32_t early_stop = 0;
  bool no_transfer = false;
  // With --onnx: do not try library templates (vendor-library calls such
  // as CLBlast's) beside each task's generated template.
  bool no_library = false;
  // With --onnx: do not send the model for the end-to-end measurement
  // once the budget is spent (docs/TUNING.md, "Measured latency").
  bool no_measure = false;
  // Timing policy; negative: the server's default.
  int repeat = -1;
  int number = -1;
  double min_repeat_ms = -1;
  bool json = false;
  bool quiet = false;  // no progress lines on stderr
  // Without --server: the embedded server's database and log level, the
  // embedded agent's OpenCL device (--db, --platform, --device, --verbose,
  // --log-level). Its device_key is left empty: `device_key` above names
  // the key on either path and is passed on when the fleet starts.
  EmbeddedOptions embedded;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddTuneOptions(CLI::App* cmd, TuneOptions& options);

// Runs it; returns the process exit code (common.h): 0 when the job ended
// done, 1 when it failed or the connection to the server was lost (the
// message says how to follow the job), 130 after Ctrl-C.
int RunTune(const TuneOptions& options);

// The job a tune command runs now, for its Ctrl-C handler (another
// thread). Thread-safe.
class CurrentJob {
 public:
  // Once the server accepted the job.
  void Set(int64_t job_id) { job_id_.store(job_id); }
  int64_t id() const { return job_id_.load(); }  // 0: none yet
  // The CancelJob answer after a Ctrl-C: the count and the trials in
  // flight at that moment.
  void SetCancelled(const tunefleet::v1::JobProgress& p);
  std::optional<tunefleet::v1::JobProgress> cancelled() const;

 private:
  std::atomic<int64_t> job_id_{0};
  mutable std::mutex mu_;
  std::optional<tunefleet::v1::JobProgress> cancelled_;
};

// One tune command's run (of a workload or a model): the embedded fleet
// (none with --server), the job it runs and the Ctrl-C handler, declared
// after what its callback uses so that its watcher thread (which may still
// be cancelling the job) is joined before they are destroyed.
struct TuneRun {
  std::unique_ptr<EmbeddedFleet> fleet;
  CurrentJob current;
  StopSignal stop{nullptr};

  // Once the server accepted job `job_id`: it is the current job, and
  // cancelled at once on the embedded fleet after a Ctrl-C while it was
  // being submitted (which cancelled none).
  void Submitted(int64_t job_id);
  // The job's progress for the summary of a job that ended as `last`:
  // after a Ctrl-C, the cancel's answer (trials still in flight then may
  // land later), else `last`.
  tunefleet::v1::JobProgress CancelledProgress(
      const tunefleet::v1::JobProgress& last) const;
  // The command's exit code for a job that ended as `last`: 130 after a
  // Ctrl-C (as shells report SIGINT), kExitOk when it is done, else
  // kExitFailed.
  int ExitCode(const tunefleet::v1::JobProgress& last) const;
};

// What a tune command runs against: the server (--server with the
// connection flags, or an embedded fleet started here and kept alive by
// `run->fleet`), with Ctrl-C wired to `run->stop`. With the embedded fleet
// the first Ctrl-C cancels `run->current`'s job (all of the fleet's before
// one is submitted) and the command ends once the job has (a second Ctrl-C
// quits at once); with a remote server it ends this process and leaves the
// job running there, naming it and how to follow or cancel it. Errors:
// INVALID_ARGUMENT for an unknown --strategy (checked first), the
// connection flags' (ConnectionTo), the fleet's start errors.
absl::StatusOr<client::ServerConnection> StartTune(const TuneOptions& options,
                                                   TuneRun* run);

// A SubmitJobRequest with the options' strategy, seed, timing and flags.
tunefleet::v1::SubmitJobRequest JobRequest(const TuneOptions& options,
                                           const templates::Workload& workload,
                                           uint32_t trials);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_TUNE_COMMAND_H_
