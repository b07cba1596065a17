#include "validation/validation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "contract/model_job_fields.h"
#include "contract/names.h"
#include "contract/timing_policy.h"
#include "kernel_policy/source_check.h"
#include "trial/trial_request.h"

namespace tunefleet::validation {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

// A value quoted for a message: escaped and cut at 64 characters, so that
// a hostile value neither floods logs nor breaks their lines.
std::string Quote(absl::string_view value) {
  constexpr size_t kShown = 64;
  return absl::StrCat("'", absl::CEscape(value.substr(0, kShown)),
                      value.size() > kShown ? "...'" : "'");
}

// OK when `value` has at most `max` bytes.
absl::Status CheckLength(absl::string_view field, absl::string_view value,
                         size_t max) {
  if (value.size() <= max) return absl::OkStatus();
  return Invalid(
      field, absl::StrCat(value.size(), " bytes; at most ", max, " allowed"));
}

// OK when `value` has at most `max` bytes and is printable text
// (base::IsPrintable: no control character, escape sequence, line
// separator or bidirectional control), as names and device strings must
// be: they land in logs and terminals.
absl::Status CheckText(absl::string_view field, absl::string_view value,
                       size_t max) {
  if (absl::Status s = CheckLength(field, value, max); !s.ok()) return s;
  if (base::IsPrintable(value)) return absl::OkStatus();
  return Invalid(field, absl::StrCat(Quote(value),
                                     " holds a control character, an escape "
                                     "sequence or malformed UTF-8; names and "
                                     "device strings must be printable"));
}

// OK when `list` (the repeated field `field`, whose entries are called
// `what`) has at most `max_size` entries, each printable text of at most
// `max_length` bytes (CheckText).
absl::Status CheckTextList(
    absl::string_view field, absl::string_view what,
    const google::protobuf::RepeatedPtrField<std::string>& list, int max_size,
    size_t max_length) {
  if (list.size() > max_size) {
    return Invalid(
        field, absl::StrCat(list.size(), " ", what, "; at most ", max_size));
  }
  for (int i = 0; i < list.size(); ++i) {
    if (absl::Status s = CheckText(absl::StrCat(field, "[", i, "]"),
                                   list.Get(i), max_length);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckName(absl::string_view field, absl::string_view value,
                       bool allow_empty) {
  if (value.empty()) {
    return allow_empty ? absl::OkStatus() : Invalid(field, "must not be empty");
  }
  if (value.size() > kMaxNameLength) {
    return Invalid(field, absl::StrCat("must be at most ", kMaxNameLength,
                                       " characters, got ", value.size()));
  }
  for (char c : value) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
        c != '_' && c != '.') {
      return Invalid(field, absl::StrCat(Quote(value),
                                         " may hold only letters, digits, "
                                         "'.', '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckJobId(absl::string_view field, int64_t job_id,
                        bool allow_zero) {
  if (job_id >= 1 || (allow_zero && job_id == 0)) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be ", allow_zero ? ">= 0" : ">= 1",
                                     ", got ", job_id));
}

absl::Status ValidateWorkloadProto(const tunefleet::v1::Workload& workload,
                                   absl::string_view field) {
  if (absl::Status s = CheckName(absl::StrCat(field, ".op"), workload.op(),
                                 /*allow_empty=*/false);
      !s.ok()) {
    return s;
  }
  if (!tunefleet::v1::Dtype_IsValid(workload.dtype())) {
    return Invalid(absl::StrCat(field, ".dtype"),
                   absl::StrCat("unknown value ", workload.dtype(),
                                "; known: fp32, fp16"));
  }
  if (workload.dims_size() == 0) {
    return Invalid(absl::StrCat(field, ".dims"), "no dims given");
  }
  if (workload.dims_size() > static_cast<int>(templates::kMaxWorkloadDims)) {
    return Invalid(absl::StrCat(field, ".dims"),
                   absl::StrCat(workload.dims_size(), " dims; at most ",
                                templates::kMaxWorkloadDims));
  }
  if (workload.attrs_size() > static_cast<int>(templates::kMaxWorkloadAttrs)) {
    return Invalid(absl::StrCat(field, ".attrs"),
                   absl::StrCat(workload.attrs_size(), " attributes; at most ",
                                templates::kMaxWorkloadAttrs));
  }
  std::set<std::string> seen;
  for (int i = 0; i < workload.dims_size(); ++i) {
    const std::string f = absl::StrCat(field, ".dims[", i, "].name");
    const std::string& name = workload.dims(i).name();
    if (absl::Status s = CheckName(f, name, false); !s.ok()) return s;
    if (!seen.insert(name).second) {
      return Invalid(f, absl::StrCat("dim ", name, " is given more than once"));
    }
  }
  seen.clear();
  for (int i = 0; i < workload.attrs_size(); ++i) {
    const std::string f = absl::StrCat(field, ".attrs[", i, "]");
    const tunefleet::v1::Workload::Attr& a = workload.attrs(i);
    if (absl::Status s = CheckName(absl::StrCat(f, ".name"), a.name(), false);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckName(absl::StrCat(f, ".value"), a.value(), false);
        !s.ok()) {
      return s;
    }
    if (!seen.insert(a.name()).second) {
      return Invalid(
          absl::StrCat(f, ".name"),
          absl::StrCat("attribute ", a.name(), " is given more than once"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<tunefleet::v1::TimingPolicy> ValidateTimingPolicy(
    const tunefleet::v1::SubmitJobRequest& request) {
  if (!request.has_timing()) return contract::DefaultTimingPolicy();
  TUNEFLEET_RETURN_IF_ERROR(contract::CheckTimingPolicy(request.timing()));
  return contract::WithDefaults(request.timing());
}

absl::Status ValidateTemplateSpec(const tunefleet::v1::TemplateSpec& spec) {
  if (spec.spec().empty()) {
    return Invalid("template_spec.spec", "must not be empty");
  }
  if (absl::Status s =
          CheckLength("template_spec.spec", spec.spec(), kMaxSpecBytes);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckLength("template_spec.source", spec.source(), kMaxSourceBytes);
      !s.ok()) {
    return s;
  }
  // What no agent compiles (kernel_policy/source_check.h): refused here,
  // before anything is parsed or registered.
  if (absl::Status s = kernel_policy::CheckKernelSource(spec.source());
      !s.ok()) {
    return Invalid("template_spec.source", s.message());
  }
  if (spec.format() != "toml" && spec.format() != "json") {
    return Invalid(
        "template_spec.format",
        absl::StrCat("must be toml or json, got ", Quote(spec.format())));
  }
  return absl::OkStatus();
}

absl::Status ValidateSubmitJobRequest(
    const tunefleet::v1::SubmitJobRequest& request) {
  if (!request.has_workload()) return Invalid("workload", "missing");
  if (absl::Status s = ValidateWorkloadProto(request.workload()); !s.ok()) {
    return s;
  }
  // With a template_spec the spec names the template and template_name is
  // ignored (tunefleet tune --template FILE sends the file's path there).
  if (absl::Status s =
          request.has_template_spec()
              ? CheckText("template_name", request.template_name(),
                          kMaxPathLength)
              : CheckName("template_name", request.template_name(), true);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckName("device_key", request.device_key(), true);
      !s.ok()) {
    return s;
  }
  if (!tunefleet::v1::Strategy_IsValid(request.strategy())) {
    return Invalid(
        "strategy",
        absl::StrCat("unknown value ", request.strategy(), "; known: ",
                     absl::StrJoin(contract::StrategyNames(), ", ")));
  }
  if (request.trials() < 1 || request.trials() > kMaxTrialsPerJob) {
    return Invalid("trials",
                   absl::StrCat("must be between 1 and ", kMaxTrialsPerJob,
                                ", got ", request.trials()));
  }
  if (request.early_stop() > kMaxTrialsPerJob) {
    return Invalid("early_stop",
                   absl::StrCat("must be at most ", kMaxTrialsPerJob, ", got ",
                                request.early_stop()));
  }
  if (request.priority() < -kMaxPriority || request.priority() > kMaxPriority) {
    return Invalid("priority",
                   absl::StrCat("must be between ", -kMaxPriority, " and ",
                                kMaxPriority, ", got ", request.priority()));
  }
  if (request.deadline_s() > kMaxDeadlineS) {
    return Invalid("deadline_s",
                   absl::StrCat("must be at most ", kMaxDeadlineS,
                                " (a year), got ", request.deadline_s()));
  }
  if (absl::StatusOr<tunefleet::v1::TimingPolicy> t =
          ValidateTimingPolicy(request);
      !t.ok()) {
    return t.status();
  }
  if (request.has_template_spec()) {
    if (absl::Status s = ValidateTemplateSpec(request.template_spec());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSubmitModelJobRequest(
    const tunefleet::v1::SubmitModelJobRequest& request) {
  if (absl::Status s =
          CheckText("model_name", request.model_name(), kMaxTextLength);
      !s.ok()) {
    return s;
  }
  if (request.tasks().empty() || request.tasks_size() > kMaxModelTasks) {
    return Invalid("tasks", absl::StrCat("must hold 1 to ", kMaxModelTasks,
                                         " tasks, got ", request.tasks_size()));
  }
  for (int i = 0; i < request.tasks_size(); ++i) {
    const tunefleet::v1::ModelTask& task = request.tasks(i);
    const std::string field = absl::StrCat("tasks[", i, "]");
    if (!task.has_workload()) return Invalid(field + ".workload", "missing");
    if (task.weight() < 1 || task.weight() > kMaxTaskWeight) {
      return Invalid(field + ".weight",
                     absl::StrCat("must be between 1 and ", kMaxTaskWeight,
                                  ", got ", task.weight()));
    }
  }
  // The ONNX bytes of the end-to-end measurement (docs/TUNING.md).
  constexpr size_t kMaxOnnxBytes = size_t{48} << 20;
  if (request.onnx_model().size() > kMaxOnnxBytes) {
    return Invalid("onnx_model",
                   absl::StrCat(request.onnx_model().size(),
                                " bytes exceed the limit of ", kMaxOnnxBytes,
                                " bytes; tune without the end-to-end "
                                "measurement (tune --onnx --no-measure)"));
  }
  if (request.input_shapes_size() > 64) {
    return Invalid("input_shapes", "more than 64 shapes");
  }
  for (int i = 0; i < request.input_shapes_size(); ++i) {
    if (absl::Status s = CheckText(absl::StrCat("input_shapes[", i, "]"),
                                   request.input_shapes(i), kMaxTextLength);
        !s.ok()) {
      return s;
    }
  }
  if (!tunefleet::v1::TaskScheduler_IsValid(request.task_scheduler())) {
    return Invalid("task_scheduler",
                   absl::StrCat("unknown value ", request.task_scheduler(),
                                "; known: gradient, round_robin"));
  }
  if (request.batch_trials() > request.trials()) {
    return Invalid("batch_trials",
                   absl::StrCat("must be at most trials (", request.trials(),
                                "), got ", request.batch_trials()));
  }
  // The job-wide fields as a job's, with a stand-in workload.
  tunefleet::v1::SubmitJobRequest job = contract::JobWideRequest(request);
  *job.mutable_workload() = request.tasks(0).workload();
  if (absl::Status s =
          ValidateWorkloadProto(job.workload(), "tasks[0].workload");
      !s.ok()) {
    return s;
  }
  return ValidateSubmitJobRequest(job);
}

absl::Status ValidateTask(const templates::KernelTemplate& tmpl,
                          const templates::Workload& workload) {
  for (const templates::BufferDesc& b : tmpl.Buffers(workload)) {
    const uint64_t element_bytes = templates::ElementBytes(b.dtype);
    if (b.elements < 1 || b.elements > kMaxBufferBytes / element_bytes) {
      return Invalid("workload",
                     absl::StrCat("buffer ", b.name, " of ",
                                  workload.Canonical(), " has ", b.elements,
                                  " elements; it needs >= 1 and at "
                                  "most ",
                                  kMaxBufferBytes, " bytes"));
    }
  }
  const double flops = tmpl.Flops(workload);
  const double bytes = tmpl.Bytes(workload);
  if (!std::isfinite(flops) || flops < 0 || !std::isfinite(bytes) ||
      bytes < 0) {
    return Invalid(
        "workload",
        absl::StrCat("template ", tmpl.name(), " counts ", flops, " FLOPs and ",
                     bytes, " bytes for ", workload.Canonical()));
  }
  return absl::OkStatus();
}

absl::StatusOr<templates::KnobValues> ValidateConfig(
    const templates::KernelTemplate& tmpl, const tunefleet::v1::Config& config,
    absl::string_view field) {
  const std::vector<templates::Knob>& knobs = tmpl.knobs();
  if (config.knobs_size() != static_cast<int>(knobs.size())) {
    return Invalid(field,
                   absl::StrCat(config.knobs_size(), " knobs given; template ",
                                tmpl.name(), " has ", knobs.size()));
  }
  templates::KnobValues values(knobs.size());
  std::vector<bool> seen(knobs.size(), false);
  for (int i = 0; i < config.knobs_size(); ++i) {
    const tunefleet::v1::KnobValue& kv = config.knobs(i);
    const std::string f = absl::StrCat(field, ".knobs[", i, "]");
    if (absl::Status s = CheckName(absl::StrCat(f, ".name"), kv.name(), false);
        !s.ok()) {
      return s;
    }
    const int k = tmpl.KnobIndex(kv.name());
    if (k < 0) {
      return Invalid(absl::StrCat(f, ".name"),
                     absl::StrCat("template ", tmpl.name(), " has no knob ",
                                  Quote(kv.name())));
    }
    if (seen[k]) {
      return Invalid(absl::StrCat(f, ".name"),
                     absl::StrCat("knob ", kv.name(), " is given twice"));
    }
    const std::vector<int64_t>& allowed = knobs[k].values;
    if (std::find(allowed.begin(), allowed.end(), kv.value()) ==
        allowed.end()) {
      return Invalid(
          absl::StrCat(f, ".value"),
          absl::StrCat(kv.name(), "=", kv.value(), " is outside its values {",
                       absl::StrJoin(allowed, ","), "}"));
    }
    seen[k] = true;
    values[k] = kv.value();
  }
  return values;
}

absl::Status ValidateWatchJobRequest(
    const tunefleet::v1::WatchJobRequest& request) {
  return CheckJobId("job_id", request.job_id(), /*allow_zero=*/false);
}

absl::Status ValidateGetJobRequest(
    const tunefleet::v1::GetJobRequest& request) {
  return CheckJobId("job_id", request.job_id(), /*allow_zero=*/false);
}

absl::Status ValidateCancelJobRequest(
    const tunefleet::v1::CancelJobRequest& request) {
  return CheckJobId("job_id", request.job_id(), /*allow_zero=*/false);
}

absl::Status ValidateListJobsRequest(
    const tunefleet::v1::ListJobsRequest& request) {
  if (request.page_size() <= kMaxListedJobs) return absl::OkStatus();
  return Invalid("page_size", absl::StrCat("at most ", kMaxListedJobs, ", got ",
                                           request.page_size()));
}

absl::Status ValidateQueryRecordsRequest(
    const tunefleet::v1::QueryRecordsRequest& request) {
  if (absl::Status s = CheckName("op", request.op(), true); !s.ok()) return s;
  if (absl::Status s = CheckName("device_key", request.device_key(), true);
      !s.ok()) {
    return s;
  }
  if (request.page_size() > kMaxRecordsPage) {
    return Invalid("page_size", absl::StrCat("at most ", kMaxRecordsPage,
                                             ", got ", request.page_size()));
  }
  return CheckJobId("job_id", request.job_id(), /*allow_zero=*/true);
}

absl::Status ValidateHello(const tunefleet::v1::Hello& hello) {
  if (absl::Status s = CheckName("hello.device_key", hello.device_key(), false);
      !s.ok()) {
    return s;
  }
  const std::pair<const char*, const std::string*> texts[] = {
      {"hello.agent_name", &hello.agent_name()},
      {"hello.agent_version", &hello.agent_version()},
      {"hello.device.platform_name", &hello.device().platform_name()},
      {"hello.device.platform_version", &hello.device().platform_version()},
      {"hello.device.device_name", &hello.device().device_name()},
      {"hello.device.vendor", &hello.device().vendor()},
      {"hello.device.driver_version", &hello.device().driver_version()},
      {"hello.device.device_version", &hello.device().device_version()},
      {"hello.device.opencl_c_version", &hello.device().opencl_c_version()},
      {"hello.device.device_type", &hello.device().device_type()},
  };
  for (const auto& [field, text] : texts) {
    if (absl::Status s = CheckText(field, *text, kMaxTextLength); !s.ok()) {
      return s;
    }
  }
  if (hello.max_in_flight() > kMaxInFlight) {
    return Invalid("hello.max_in_flight",
                   absl::StrCat("at most ", kMaxInFlight, ", got ",
                                hello.max_in_flight()));
  }
  const tunefleet::v1::DeviceInfo& d = hello.device();
  if (d.max_work_group_size() == 0) {
    return Invalid("hello.device.max_work_group_size", "must be > 0");
  }
  if (d.max_work_item_sizes_size() > kMaxWorkItemDims) {
    return Invalid("hello.device.max_work_item_sizes",
                   absl::StrCat(d.max_work_item_sizes_size(),
                                " sizes; at most ", kMaxWorkItemDims));
  }
  if (absl::Status s =
          CheckTextList("hello.device.extensions", "extensions", d.extensions(),
                        kMaxExtensions, kMaxNameLength);
      !s.ok()) {
    return s;
  }
  return CheckTextList("hello.device.libraries", "libraries", d.libraries(),
                       kMaxExtensions, kMaxNameLength);
}

absl::Status ValidateMeasurement(const tunefleet::v1::Measurement& m,
                                 absl::string_view field) {
  if (m.error() == tunefleet::v1::Measurement::ERROR_UNSPECIFIED ||
      !tunefleet::v1::Measurement::Error_IsValid(m.error())) {
    return Invalid(absl::StrCat(field, ".error"),
                   absl::StrCat("unknown error code ", m.error()));
  }
  if (m.times_ns_size() > kMaxResultTimes) {
    return Invalid(
        absl::StrCat(field, ".times_ns"),
        absl::StrCat(m.times_ns_size(), " times; at most ", kMaxResultTimes));
  }
  bool any_positive = false;
  for (double t : m.times_ns()) {
    if (!std::isfinite(t) || t < 0) {
      return Invalid(absl::StrCat(field, ".times_ns"),
                     absl::StrCat("time ", t, " is not a finite number >= 0"));
    }
    any_positive = any_positive || t > 0;
  }
  if (m.error() == tunefleet::v1::Measurement::OK && !any_positive) {
    return Invalid(absl::StrCat(field, ".times_ns"),
                   "an OK result needs a time > 0");
  }
  // The time a result is stored and ranked by is the median of its rounds
  // (trial::MedianNs): an OK one whose median is 0 measured nothing.
  if (m.error() == tunefleet::v1::Measurement::OK &&
      trial::MedianNs(m.times_ns()) <= 0) {
    return Invalid(absl::StrCat(field, ".times_ns"),
                   "an OK result needs a median time > 0 (most of its "
                   "rounds reported 0)");
  }
  if (!std::isfinite(m.pack_ns()) || m.pack_ns() < 0) {
    return Invalid(absl::StrCat(field, ".pack_ns"),
                   absl::StrCat(m.pack_ns(), " is not a finite number >= 0"));
  }
  return CheckLength(absl::StrCat(field, ".error_message"), m.error_message(),
                     kMaxErrorMessageBytes);
}

tunefleet::v1::Measurement CheckedMeasurement(
    const tunefleet::v1::Measurement& measurement) {
  absl::Status s = ValidateMeasurement(measurement, "measurement");
  if (s.ok()) return measurement;
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::RUNTIME_ERROR);
  m.set_error_message(
      absl::StrCat("the agent sent an invalid result: ", s.message()));
  return m;
}

}  // namespace tunefleet::validation
