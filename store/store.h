// The tuning-record database (docs/ARCHITECTURE.md, Store): devices, workloads,
// templates, jobs and trials in one SQLite file in WAL mode. A trial row is
// written before the trial is sent; its result is written in one transaction,
// idempotently by trial id, so a repeated result never counts twice.
#ifndef TUNEFLEET_STORE_STORE_H_
#define TUNEFLEET_STORE_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/pass_key.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/task.h"
#include "kernels_templates/workload.h"
#include "store/exchange.h"
#include "store/openers_lock.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "store/trial_write.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::store {

// What a new job row holds: its task (the workload and its template, never
// null here), where it runs and how it searches. The server's JobSpec adds
// what only the running job needs.
struct JobParams : templates::Task {
  std::string device_key;
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  int64_t budget = 0;  // trials
  uint64_t seed = 0;
  int priority = 0;
  int64_t created_ms = 0;   // Unix ms; 0: now, by the system clock
  int64_t deadline_ms = 0;  // Unix ms past which the job ends; 0: none
  // For a task of a model job: the model job's id and the task's index in
  // its request; 0 and -1 for a job of its own.
  int64_t model_job_id = 0;
  int task_index = -1;
  // Valid configs of the task on the device (search_space::SearchSpace::
  // valid_size()); 0: unknown.
  uint64_t space_size = 0;
};

// What a new model job row holds (SubmitModelJobRequest, checked).
struct ModelJobParams {
  std::string model_name;
  std::string device_key;
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  tunefleet::v1::TaskScheduler task_scheduler =
      tunefleet::v1::TASK_SCHEDULER_GRADIENT;
  int64_t budget = 0;  // trials over all tasks
  uint64_t seed = 0;
  int priority = 0;
  int64_t created_ms = 0;   // Unix ms; 0: now
  int64_t deadline_ms = 0;  // Unix ms; 0: none
  // The ONNX bytes and NAME=DIMS input shapes the request carried (kept in
  // model_job_models for the end-to-end measurement); empty: none.
  std::string onnx_model;
  std::vector<std::string> input_shapes;
};

// A model job's ONNX model as its request carried it.
struct ModelJobModel {
  std::string onnx;                       // the file's bytes
  std::vector<std::string> input_shapes;  // NAME=DIMS
};

// A model job as stored. Its tasks are job rows (Store::ModelTaskJobs).
struct ModelJob {
  int64_t id = 0;
  std::string model_name;
  std::string device_key;
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  tunefleet::v1::TaskScheduler task_scheduler =
      tunefleet::v1::TASK_SCHEDULER_GRADIENT;
  int64_t budget = 0;
  uint64_t seed = 0;
  int priority = 0;
  tunefleet::v1::JobState state = tunefleet::v1::JOB_STATE_QUEUED;
  std::string message;
  std::string request_json;  // the SubmitModelJobRequest as JSON
  int64_t created_ms = 0;
  int64_t deadline_ms = 0;
};

// A job as stored.
// The stored row of a job, as opposed to server::Job, the live one.
struct StoredJob {
  int64_t id = 0;
  std::string workload;  // canonical string
  std::string template_name;
  int template_version = 0;
  std::string device_key;
  tunefleet::v1::Strategy strategy = tunefleet::v1::STRATEGY_XGB;
  int64_t budget = 0;
  uint64_t seed = 0;
  int priority = 0;
  tunefleet::v1::JobState state = tunefleet::v1::JOB_STATE_QUEUED;
  std::string message;
  double reference_ns = 0;   // naive reference kernel time; 0 if unmeasured
  std::string request_json;  // the SubmitJobRequest (schema v2; else empty)
  int64_t created_ms = 0;    // Unix ms
  int64_t deadline_ms = 0;   // Unix ms; 0: none
  int64_t model_job_id = 0;  // a model job's task: its model job; else 0
  int task_index = -1;       // a model job's task: its index; else -1
  int64_t granted = 0;       // a model job's task: trials granted so far
  uint64_t space_size = 0;   // JobParams::space_size (schema v6; else 0)
};

// A trial as stored, for resuming a job.
struct Trial {
  int64_t id = 0;
  uint64_t config_index = 0;
  tunefleet::v1::TrialState state = tunefleet::v1::TRIAL_STATE_PENDING;
  // When done: the measurement's error code.
  tunefleet::v1::Measurement::Error error =
      tunefleet::v1::Measurement::ERROR_UNSPECIFIED;
  double time_ns = 0;
  int attempt = 0;  // leases so far
};

// A trial to create: its config by search-space index and as text.
struct NewTrial {
  uint64_t config_index = 0;
  std::string config;  // "MWG=64,NWG=64,..."
};

// A record to re-measure on a new driver: one config of a task and its
// best time on the key's earlier drivers.
struct RevalidationTarget {
  int64_t source_trial_id = 0;
  uint64_t config_index = 0;
  std::string config;  // "MWG=64,..." as stored
  double time_ns = 0;
};

// The best configs of one task (workload, template) of a key, fastest
// first, with the stored request of the job that measured the fastest.
struct RevalidationTask {
  std::string workload_key;  // canonical workload
  std::string template_name;
  std::string request_json;  // that job's SubmitJobRequest as JSON
  std::vector<RevalidationTarget> targets;
};

// Completed trials of a job: how many, per error code, and the best.
struct JobTally {
  // Measured trials (CANCELLED ones, which the job's end left unmeasured,
  // are only in `cancelled`).
  int64_t done = 0;
  int64_t cancelled = 0;
  std::map<std::string, uint32_t> errors;  // by Measurement.Error name
  std::optional<tunefleet::v1::TuningRecord> best;
};

// One agent's trials as the store has them (for the dashboard's fleet
// page): an agent measures for one device key, but a renamed or moved
// agent shows once per key.
struct AgentTrialCounts {
  std::string agent;  // the agent's name (trials.agent)
  std::string device_key;
  // Rows leased to it and not answered: only where leases are written
  // (ServerOptions::write_leases); tunefleet-server keeps them in memory.
  int64_t leased = 0;
  int64_t measured = 0;                   // trials it measured (any error code)
  std::map<std::string, int64_t> errors;  // measured, by error code != OK
  int64_t last_trial_ms = 0;  // Unix ms of its latest lease or result
};

struct RecordFilter {
  std::string op;             // empty: any
  std::string device_key;     // empty: any
  int64_t job_id = 0;         // 0: any
  std::string template_name;  // empty: any
  bool best_only = false;  // best record per (device key, workload, template)
  // Without best_only: measured trials only, leaving out those the job's
  // end left unmeasured (CANCELLED), as the dashboard plots them.
  bool measured_only = false;
  // A page of the result: at most `limit` records (0: all), after skipping
  // records up to trial id `after_trial_id` (records are in trial id order;
  // a keyset page: it seeks to that id) or, with best_only (in device key,
  // op, shape, dtype, template order), the first `offset` records (an
  // offset into the best-record table, one row per task, not the trials).
  int64_t limit = 0;
  int64_t after_trial_id = 0;
  int64_t offset = 0;
};

// Thread-safe: one connection behind a mutex.
class Store {
 public:
  // Opens or creates the database (mode 0600) and migrates its schema.
  // Holds a shared OpenersLock ("<path>-openers") until destroyed.
  // Errors: UNAVAILABLE when the file (or its lock file) cannot be opened,
  // FAILED_PRECONDITION when its schema is newer than this build.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);

  // Jobs an earlier process left queued or running and nobody runs any
  // more (store/abandoned_jobs.cc): a `tunefleet tune` of the embedded
  // default killed (SIGKILL) before its jobs ended never resumes them, so
  // they would show as running forever. Marks failed, with `message`
  // (SetJobState: their unmeasured trials become CANCELLED):
  // - jobs (not tasks of model jobs) left queued or running with a trial
  //   leased to or measured by an agent whose name starts with
  //   `agent_prefix` (the embedded agents' names), and
  // - model jobs left queued or running with such a task, and all their
  //   unfinished tasks.
  // Only when this Store is the database's sole opener (OpenersLock): a
  // live tunefleet-server or command holding it open keeps its jobs;
  // then nothing is marked. Jobs of other agents (a stopped
  // tunefleet-server's, which it resumes on its next start) are never
  // marked. Returns how many jobs and model jobs were marked.
  absl::StatusOr<int> InterruptAbandonedJobs(absl::string_view agent_prefix,
                                             const std::string& message);

  absl::Status UpsertDevice(const std::string& key,
                            const tunefleet::v1::DeviceInfo& info);
  // NOT_FOUND when the key was never seen.
  absl::StatusOr<tunefleet::v1::DeviceInfo> GetDevice(const std::string& key);
  absl::StatusOr<std::vector<std::pair<std::string, tunefleet::v1::DeviceInfo>>>
  ListDevices();

  // Writes workload, template and job in one transaction; returns the id
  // (never one a model job has).
  // `request_json` is what was submitted, kept so the job can resume.
  absl::StatusOr<int64_t> CreateJob(const JobParams& job,
                                    const std::string& request_json = "");
  // NOT_FOUND for an unknown id.
  absl::StatusOr<StoredJob> GetJob(int64_t job_id);
  // The newest `limit` jobs (0: all) with an id below `before_id` (0: any),
  // newest first; not the tasks of model jobs.
  absl::StatusOr<std::vector<StoredJob>> ListJobs(int64_t limit,
                                                  int64_t before_id = 0);
  // Jobs queued or running (a server stopped before they ended), oldest
  // first; not the tasks of model jobs.
  absl::StatusOr<std::vector<StoredJob>> UnfinishedJobs();

  // Model jobs (store/model_jobs.cc). Writes the model job row; returns its
  // id (never one a job has). Its tasks' jobs are then CreateJob()s with
  // JobParams::model_job_id set.
  absl::StatusOr<int64_t> CreateModelJob(const ModelJobParams& params,
                                         const std::string& request_json);
  // NOT_FOUND for an unknown id.
  absl::StatusOr<ModelJob> GetModelJob(int64_t model_job_id);
  // As ListJobs, for model jobs.
  absl::StatusOr<std::vector<ModelJob>> ListModelJobs(int64_t limit,
                                                      int64_t before_id = 0);
  // Model jobs queued or running, oldest first.
  absl::StatusOr<std::vector<ModelJob>> UnfinishedModelJobs();
  // A model job's task jobs, by task index.
  absl::StatusOr<std::vector<StoredJob>> ModelTaskJobs(int64_t model_job_id);
  absl::Status SetModelJobState(int64_t model_job_id,
                                tunefleet::v1::JobState state,
                                const std::string& message);
  // A model job's end-to-end measurement (store/model_measurements.cc;
  // docs/TUNING.md, "Measured latency"). The ONNX model its request
  // carried; NOT_FOUND when it carried none.
  absl::StatusOr<ModelJobModel> GetModelJobModel(int64_t model_job_id);
  // Appends point `seq` (0, 1, ...) of a model job's latency history; a
  // point of that seq already stored is replaced.
  absl::Status AddModelLatencyPoint(int64_t model_job_id, int seq,
                                    const tunefleet::v1::LatencyPoint& point);
  // Its latency history, oldest first (empty when none).
  absl::StatusOr<std::vector<tunefleet::v1::LatencyPoint>> ModelLatencyHistory(
      int64_t model_job_id);
  // Stores (replaces) its measured latency and per-layer times, at once.
  absl::Status SetModelMeasurement(
      int64_t model_job_id, const tunefleet::v1::MeasuredLatency& measured);
  // Its measured latency; nullopt while none was stored.
  absl::StatusOr<std::optional<tunefleet::v1::MeasuredLatency>>
  GetModelMeasurement(int64_t model_job_id);
  // Records the trials the task scheduler has granted a model job's task.
  absl::Status SetTaskGranted(int64_t job_id, int64_t granted);
  // Every trial row of a job in id order.
  absl::StatusOr<std::vector<Trial>> JobTrials(int64_t job_id);
  // leased -> pending for every trial of a job (its agents are gone).
  absl::Status RequeueLeased(int64_t job_id);
  absl::Status SetJobState(int64_t job_id, tunefleet::v1::JobState state,
                           const std::string& message);
  // Records the naive reference kernel's time for the job's task.
  absl::Status SetJobReference(int64_t job_id, double reference_ns);

  // Inserts pending trials in one transaction; returns their ids in order.
  absl::StatusOr<std::vector<int64_t>> InsertTrials(
      int64_t job_id, const std::vector<NewTrial>& trials);
  // pending -> leased to `agent`, attempt + 1. (tunefleet-server keeps
  // leases in memory and writes none: ServerOptions::write_leases.)
  absl::Status LeaseTrial(int64_t trial_id, const std::string& agent);
  // Back to pending, not done (the agent vanished; DEVICE_LOST is not a
  // result); attempt raised to `attempt` (the leases lost so far) if above.
  absl::Status RequeueTrial(int64_t trial_id, int attempt = 0);
  // Writes a result in one transaction, with the lease that measured it
  // (agent, attempt and lease time: TrialLease; empty fields keep the
  // row's). Returns false (and changes nothing) when the trial was already
  // done: results are idempotent by trial id. `time_ns` and `gflops` are 0
  // unless the measurement is OK.
  absl::StatusOr<bool> CompleteTrial(
      int64_t trial_id, const tunefleet::v1::Measurement& measurement,
      double time_ns, double gflops, const TrialLease& lease = {});
  // Applies `writes` in order in one transaction (the group commit of
  // store/trial_writer.h); returns, per write, whether it changed its row
  // (for kComplete: false when the trial was already done). On any error
  // nothing of the batch is kept. Errors: INTERNAL (SQLite).
  absl::StatusOr<std::vector<bool>> WriteTrials(
      const std::vector<TrialWrite>& writes);

  // From the per-job tables the schema's triggers keep (v4): a few index
  // reads, whatever the number of trials.
  absl::StatusOr<JobTally> TallyJob(int64_t job_id);
  // Records matching `filter`. best_only reads the best-record table (one
  // row per device key, workload and template name, kept by triggers) or,
  // with a job id, the job's best; otherwise done trials in id order from
  // `after_trial_id` on, so a page of `limit` reads about `limit` rows
  // (with a device key, op or template filter but no job id, the rows it
  // skips too).
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> QueryRecords(
      const RecordFilter& filter);
  // The best records of device key `key` measured on driver `driver`
  // (trials.driver_version, docs/DRIVER_DRIFT.md): the fastest OK trial per
  // (workload, template name) among the key's trials of that driver,
  // re-validation jobs' included, in QueryRecords' best_only order (op,
  // shape, dtype, template). With `with_unrecorded`, trials stored without
  // a driver version (measured before schema v7, on the key's first
  // driver) count too. Reads every measured trial of the key once.
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> BestRecordsOnDriver(
      const std::string& key, const std::string& driver, bool with_unrecorded);
  // The transfer history of a template (transfer/transfer.h): records of
  // op `op` and template `template_name` (any workload, any device key),
  // newest job first and trial id order within a job, measured trials only
  // (not CANCELLED or DEVICE_LOST). Reads at most `max_rows` trial rows
  // (the last job may be cut short) and one row per job of the template:
  // bounded in rows whatever the table's size.
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> HistoryRecords(
      const std::string& op, const std::string& template_name,
      int64_t max_rows);
  // The fastest time (ns) of the naive reference kernel measured for a
  // task (device key, canonical workload, template name); nullopt when
  // never measured.
  absl::StatusOr<std::optional<double>> ReferenceTime(
      const std::string& device_key, const std::string& workload,
      const std::string& template_name);
  // The stored OpenCL source of a template version. NOT_FOUND if absent.
  absl::StatusOr<std::string> TemplateSource(const std::string& name,
                                             int version);
  // Every agent's trial counts, by agent name and device key
  // (store/dashboard_reads.cc).
  absl::StatusOr<std::vector<AgentTrialCounts>> AgentTrials();
  // Counts of a job's trials by state.
  absl::StatusOr<std::map<tunefleet::v1::TrialState, int64_t>> TrialStates(
      int64_t job_id);
  // Record bundles (store/exchange.cc, docs/BUNDLES.md). The rows of the
  // records `filter` selects: every done trial (not CANCELLED) of the jobs
  // of its device key and op, those jobs (model jobs' tasks too), their
  // templates and devices. Local rows get their identities computed.
  absl::StatusOr<ExchangeRows> ExportRows(const ExchangeFilter& filter);
  // Merges `rows` in one transaction: devices and templates this file
  // lacks, jobs by origin id (an existing one keeps its row; its reference
  // time becomes the faster of the two), trials by measurement id (one
  // already here is left as it is). Trials are added done, so the best
  // records change only where an imported trial is faster (the v4
  // triggers). Checks every row first: a measurement id that does not
  // match its content, a trial of a job not in `rows`, a job whose
  // template or device is neither in `rows` nor here, or a workload that
  // does not parse is INVALID_ARGUMENT naming the row, and nothing is
  // written. Importing the same rows twice changes nothing the second time.
  absl::StatusOr<MergeSummary> MergeRows(const ExchangeRows& rows);
  // Driver revisions (store/drivers.cc, docs/DRIVER_DRIFT.md).
  // Records that an agent of `key` reports driver `driver`: returns the
  // driver's revision, a new one (the key's highest + 1, or 1) when the
  // key never had it, with *added set then.
  absl::StatusOr<int> NoteDriver(const std::string& key,
                                 const std::string& driver, bool* added);
  // The key's driver revisions (device_drivers, schema v9), oldest first,
  // with their re-validation counts over revalidation_outcomes.
  absl::StatusOr<std::vector<tunefleet::v1::DriverRevision>> DriverRevisions(
      const std::string& key);
  // The `per_task` fastest distinct configs of each task (workload,
  // template name) of the key, from OK trials of its jobs other than
  // re-validation jobs; tasks whose fastest job kept no request are left
  // out.
  absl::StatusOr<std::vector<RevalidationTask>> RevalidationTasks(
      const std::string& key, int per_task);
  // Marks `targets` as re-measured by job `job_id` on revision `revision`.
  absl::Status AddRevalidations(const std::string& key, int revision,
                                int64_t job_id,
                                const std::vector<RevalidationTarget>& targets);
  // For a re-validation job: its driver version and the config indices it
  // re-measures (ascending); nullopt for any other job.
  struct JobRevalidation {
    std::string driver_version;
    std::vector<uint64_t> config_indices;
  };
  absl::StatusOr<std::optional<JobRevalidation>> RevalidationOfJob(
      int64_t job_id);
  // Frees what SQLite's page cache holds of this connection (pages are
  // read again as needed): after a large job, so that its pages do not
  // pin the memory the job gave back.
  void ReleaseMemory();

  // Use Open().
  Store(base::PassKey<Store>, Database db) : db_(std::move(db)) {}

 private:
  // Job rows matching `where` (SQL over alias j, one parameter ?1 = arg),
  // newest first, at most `limit` (0: all).
  absl::StatusOr<std::vector<StoredJob>> SelectJobs(absl::string_view where,
                                                    int64_t arg,
                                                    int64_t limit = 0)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The id for a new job or model job: above every id of both tables.
  absl::StatusOr<int64_t> NextJobId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<ModelJob>> SelectModelJobs(absl::string_view where,
                                                        int64_t arg,
                                                        int64_t limit = 0)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> UpsertWorkload(const templates::Workload& w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> UpsertTemplate(const templates::KernelTemplate& t)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // SetJobState's updates, inside the caller's transaction.
  absl::Status SetJobStateLocked(int64_t job_id, tunefleet::v1::JobState state,
                                 const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  Database db_ ABSL_GUARDED_BY(mu_);
  OpenersLock openers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_STORE_H_
