// Request checks shared by the gRPC services (issue 6, "hostile input"):
// every field a client or an agent sends is checked before it is used, and
// a bad one is refused with INVALID_ARGUMENT whose message starts with the
// field's name ("trials: ...", "workload.dims[1].name: ...",
// "template_spec.format: ...", "timing: repeat ...").
//
// The checks here need no store and change no state (no template is
// registered, no row written), so they are cheap to run first and safe to
// fuzz (tests/fuzz/validation_fuzzer.cc). What depends on the store or the
// registry (a device key never seen, a template the op lacks, the space on
// a device) stays in JobManager::Prepare, which calls these first.
#ifndef TUNEFLEET_VALIDATION_VALIDATION_H_
#define TUNEFLEET_VALIDATION_VALIDATION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/kernel_template.h"
#include "tunefleet/v1/agent.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::validation {

// Longest op, template, strategy, dtype, dim, attribute or device-key name.
inline constexpr size_t kMaxNameLength = 128;
// Longest free text an agent reports (agent name, device strings).
inline constexpr size_t kMaxTextLength = 1024;
// Longest template_name alongside a template_spec (a client's file path).
inline constexpr size_t kMaxPathLength = 4096;
// Largest trial budget one job may ask for.
inline constexpr uint32_t kMaxTrialsPerJob = 1000000;
// Sizes of a user's template spec and source a job may carry (the server
// caps a whole gRPC message at 16 MiB).
inline constexpr size_t kMaxSpecBytes = 64 << 10;
inline constexpr size_t kMaxSourceBytes = 1 << 20;
// |priority| of a job.
inline constexpr int32_t kMaxPriority = 1000;
// A job's wall-clock limit: one year.
inline constexpr uint32_t kMaxDeadlineS = 365u * 24 * 3600;
// Most jobs one ListJobs page holds, and the default page size.
inline constexpr uint32_t kMaxListedJobs = 10000;
inline constexpr uint32_t kDefaultJobsPage = 50;
// Most records one QueryRecords page holds, and the default page size.
inline constexpr uint32_t kMaxRecordsPage = 10000;
inline constexpr uint32_t kDefaultRecordsPage = 1000;
// Largest buffer a workload may need, whatever a device reports: 16 GiB.
inline constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 34;
// Agent-reported limits: requests in flight, work-item dimensions,
// extensions, times in one result, bytes of a result's error message.
inline constexpr uint32_t kMaxInFlight = 1024;
inline constexpr int kMaxWorkItemDims = 16;
inline constexpr int kMaxExtensions = 1024;
inline constexpr int kMaxResultTimes = 1000;
inline constexpr size_t kMaxErrorMessageBytes = 64 << 10;

// OK when `value` is 1..kMaxNameLength characters of [A-Za-z0-9._-] (or
// empty, where `allow_empty`). Errors: INVALID_ARGUMENT "<field>: ...".
absl::Status CheckName(absl::string_view field, absl::string_view value,
                       bool allow_empty);

// OK for a job id >= 1 (>= 0 where `allow_zero`: "all jobs"). Errors:
// INVALID_ARGUMENT "<field>: ...".
absl::Status CheckJobId(absl::string_view field, int64_t job_id,
                        bool allow_zero);

// The wire form of a workload: op, dtype, dim and attribute names are
// names (CheckName), at most kMaxWorkloadDims dims and kMaxWorkloadAttrs
// attributes, no dim or attribute twice. Values are checked against the op
// by WorkloadFromProto (Workload::Create: 0, negative, over 2^31 or a
// product over 2^53). Errors: INVALID_ARGUMENT "<field>...: ...".
absl::Status ValidateWorkloadProto(const tunefleet::v1::Workload& workload,
                                   absl::string_view field = "workload");

// The request's timing policy (contract::DefaultTimingPolicy() when unset)
// with unset fields taken from the default (contract::WithDefaults), each
// field within its cap (contract::CheckTimingPolicy). Errors: INVALID_ARGUMENT
// "timing: <field> ...".
absl::StatusOr<tunefleet::v1::TimingPolicy> ValidateTimingPolicy(
    const tunefleet::v1::SubmitJobRequest& request);

// Sizes and format of a user's template spec, and its source as agents
// accept it (kernel_policy/source_check.h: no #include, #line, ...); the
// spec's content is checked by SpecTemplate::Parse. Errors:
// INVALID_ARGUMENT "template_spec.<field>:".
absl::Status ValidateTemplateSpec(const tunefleet::v1::TemplateSpec& spec);

// Every field of a job submission that can be checked without the store:
// workload (wire form), template_name (a name; with a template_spec it is
// ignored and only its length and printability checked), device_key,
// strategy, trials,
// priority, timing, early_stop, template_spec, deadline_s. Errors:
// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateSubmitJobRequest(
    const tunefleet::v1::SubmitJobRequest& request);

// Tasks of one model job, at most.
inline constexpr int kMaxModelTasks = 4096;
// A model task's weight (its occurrences in the model), at most.
inline constexpr uint32_t kMaxTaskWeight = 1000000;

// The model-wide fields of a model job submission: model_name (printable,
// at most kMaxTextLength), tasks (1 to kMaxModelTasks, each with a workload and
// a weight of 1 to kMaxTaskWeight), trials, strategy, task_scheduler,
// device_key, priority, deadline_s, timing, batch_trials (at most trials).
// Each task's workload and template are checked as a job's
// (JobManager::SubmitModel). Errors: INVALID_ARGUMENT naming the first bad
// field ("tasks[3].weight: ...").
absl::Status ValidateSubmitModelJobRequest(
    const tunefleet::v1::SubmitModelJobRequest& request);

// A workload against the template that will run it: every buffer has >= 1
// element and at most kMaxBufferBytes, and the FLOP and byte counts are
// finite. Errors: INVALID_ARGUMENT "workload: ...".
absl::Status ValidateTask(const templates::KernelTemplate& tmpl,
                          const templates::Workload& workload);

// A config sent as name=value pairs, in the template's space: each knob
// once, none missing, every value one of the knob's values. Errors:
// INVALID_ARGUMENT "<field>.knobs[i]...: ..." or "<field>: ...".
absl::StatusOr<templates::KnobValues> ValidateConfig(
    const templates::KernelTemplate& tmpl, const tunefleet::v1::Config& config,
    absl::string_view field = "config");

// The other client requests. Errors: INVALID_ARGUMENT naming the field
// (job_id, page_size, op, device_key).
absl::Status ValidateWatchJobRequest(
    const tunefleet::v1::WatchJobRequest& request);
absl::Status ValidateGetJobRequest(const tunefleet::v1::GetJobRequest& request);
absl::Status ValidateCancelJobRequest(
    const tunefleet::v1::CancelJobRequest& request);
absl::Status ValidateListJobsRequest(
    const tunefleet::v1::ListJobsRequest& request);
absl::Status ValidateQueryRecordsRequest(
    const tunefleet::v1::QueryRecordsRequest& request);

// An agent's Hello: device_key (a name), agent_name, agent_version, token
// length, max_in_flight, and the device info's strings, lists and
// max_work_group_size (> 0). Free text (names, device strings, extensions,
// libraries) must be printable (base::IsPrintable): a newline would forge
// a server log line, an escape sequence would reach `tunefleet devices`.
// Errors: INVALID_ARGUMENT "hello.<field>: ...".
absl::Status ValidateHello(const tunefleet::v1::Hello& hello);

// A measurement from an agent: a known error code, at most
// kMaxResultTimes times, each finite and >= 0 (an OK one needs one > 0, and
// a median, trial::MedianNs, > 0),
// pack_ns finite and >= 0, an error message of at most
// kMaxErrorMessageBytes. Errors:
// INVALID_ARGUMENT "<field>.<member>: ...".
absl::Status ValidateMeasurement(const tunefleet::v1::Measurement& measurement,
                                 absl::string_view field);
// The measurement to record: the agent's own when ValidateMeasurement()
// passes, else a RUNTIME_ERROR saying why, without times (so that a broken
// or hostile agent can neither crash the job nor win it). The server's
// TrialLedger runs every result through it, where the result enters.
tunefleet::v1::Measurement CheckedMeasurement(
    const tunefleet::v1::Measurement& measurement);

}  // namespace tunefleet::validation

#endif  // TUNEFLEET_VALIDATION_VALIDATION_H_
