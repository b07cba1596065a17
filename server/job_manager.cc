#include "server/job_manager.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels_templates/registry.h"
#include "search/strategy.h"
#include "server/status_macros.h"
#include "server/transfer.h"
#include "server/trial_request.h"

namespace tunefleet::server {
namespace {

absl::Status AsInvalid(const absl::Status& s, absl::string_view field) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", s.message()));
}

// The request's timing policy with unset fields taken from the default,
// checked against the caps. Errors: INVALID_ARGUMENT naming the field.
absl::StatusOr<tunefleet::v1::TimingPolicy> TimingPolicyFor(
    const tunefleet::v1::SubmitJobRequest& request) {
  tunefleet::v1::TimingPolicy t = DefaultTimingPolicy();
  if (!request.has_timing()) return t;
  const tunefleet::v1::TimingPolicy& r = request.timing();
  if (r.repeat() > kMaxRepeat || r.number() > kMaxLaunchesPerTrial ||
      r.max_launches() > kMaxLaunchesPerTrial ||
      r.warmup() > kMaxLaunchesPerTrial) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timing: repeat must be <= ", kMaxRepeat,
        " and number, warmup, max_launches <= ", kMaxLaunchesPerTrial));
  }
  if (!(r.min_repeat_ms() >= 0 && r.min_repeat_ms() <= 60000) ||
      !(r.max_total_ms() >= 0 && r.max_total_ms() <= 600000) ||
      !(r.cooldown_ms() >= 0 && r.cooldown_ms() <= 60000)) {
    return absl::InvalidArgumentError(
        "timing: min_repeat_ms, max_total_ms and cooldown_ms must be within "
        "0..60000, 0..600000 and 0..60000 ms");
  }
  if (r.repeat()) t.set_repeat(r.repeat());
  if (r.number()) t.set_number(r.number());
  if (r.warmup()) t.set_warmup(r.warmup());
  if (r.max_launches()) t.set_max_launches(r.max_launches());
  if (r.max_total_ms() > 0) t.set_max_total_ms(r.max_total_ms());
  // 0 means something for these two: no minimum round time, no cooldown.
  t.set_min_repeat_ms(r.min_repeat_ms());
  t.set_cooldown_ms(r.cooldown_ms());
  return t;
}

}  // namespace

absl::StatusOr<std::string> JobManager::ChooseDeviceKey(
    const std::string& requested) {
  if (!requested.empty()) return requested;
  std::set<std::string> keys;
  for (const auto& agent : scheduler_->Agents()) keys.insert(agent->key());
  if (keys.size() == 1) return *keys.begin();
  if (keys.empty()) {
    return absl::FailedPreconditionError(
        "device_key: none given and no agent is connected; start "
        "tunefleet-agent --server HOST:PORT on a device first");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device_key: none given and several keys are connected (",
                   absl::StrJoin(keys, ", "), "); choose one"));
}

absl::StatusOr<std::shared_ptr<Job>> JobManager::Submit(
    const tunefleet::v1::SubmitJobRequest& request) {
  // A user's template first: it may define the workload's op.
  std::string template_name = request.template_name();
  if (request.has_template_spec()) {
    const tunefleet::v1::TemplateSpec& spec = request.template_spec();
    if (spec.spec().size() > kMaxSpecBytes ||
        spec.source().size() > kMaxSourceBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("template_spec: spec or source over ", kMaxSpecBytes,
                       " / ", kMaxSourceBytes, " bytes"));
    }
    absl::StatusOr<const templates::KernelTemplate*> registered =
        templates::RegisterSpecTemplate(spec.spec(), spec.format(),
                                        spec.source());
    if (!registered.ok())
      return AsInvalid(registered.status(), "template_spec");
    template_name = std::string((*registered)->name());
  }
  absl::StatusOr<templates::Workload> workload =
      WorkloadFromProto(request.workload());
  if (!workload.ok()) return AsInvalid(workload.status(), "workload");
  if (request.trials() < 1 || request.trials() > kMaxTrialsPerJob) {
    return absl::InvalidArgumentError(
        absl::StrCat("trials: must be between 1 and ", kMaxTrialsPerJob,
                     ", got ", request.trials()));
  }
  const std::string strategy =
      request.strategy().empty() ? "xgb" : request.strategy();
  const std::vector<std::string> names = search::StrategyNames();
  if (std::find(names.begin(), names.end(), strategy) == names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strategy: unknown '", strategy,
                     "'; known: ", absl::StrJoin(names, ", ")));
  }
  absl::StatusOr<const templates::KernelTemplate*> tmpl =
      templates::FindTemplateFor(*workload, template_name);
  if (!tmpl.ok()) return AsInvalid(tmpl.status(), "template_name");
  TF_ASSIGN_OR_RETURN(std::string key, ChooseDeviceKey(request.device_key()));
  TF_ASSIGN_OR_RETURN(tunefleet::v1::DeviceInfo device, store_->GetDevice(key));
  const templates::DeviceLimits limits = LimitsFromDeviceInfo(device);
  if (absl::Status s = (*tmpl)->CheckWorkload(*workload, limits); !s.ok()) {
    return AsInvalid(s, "workload");
  }
  std::unique_ptr<search::SearchSpace> space =
      BuildSpace(**tmpl, *workload, limits);
  if (space->valid_size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no config of template ", (*tmpl)->name(), " fits ",
                     workload->Canonical(), " on device key ", key));
  }
  TF_ASSIGN_OR_RETURN(tunefleet::v1::TimingPolicy timing,
                      TimingPolicyFor(request));
  JobSpec spec{*workload,
               *tmpl,
               key,
               strategy,
               static_cast<int64_t>(request.trials()),
               request.seed(),
               request.priority(),
               !request.skip_reference(),
               timing,
               request.early_stop(),
               {}};
  if (!request.no_transfer() && strategy == "xgb") {
    absl::StatusOr<std::vector<search::HistoryGroup>> history =
        TransferHistory(*store_, **tmpl, kMaxHistoryRows);
    if (history.ok()) spec.history = *std::move(history);
  }
  TF_ASSIGN_OR_RETURN(int64_t id, store_->CreateJob(spec));
  auto job = std::make_shared<Job>(id, std::move(spec), std::move(device),
                                   std::move(space), store_, scheduler_);
  {
    absl::MutexLock lock(&mu_);
    jobs_[id] = job;
  }
  job->Start();
  return job;
}

std::shared_ptr<Job> JobManager::Find(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

void JobManager::OnResult(int64_t job_id, int64_t trial_id,
                          const tunefleet::v1::Measurement& measurement) {
  if (std::shared_ptr<Job> job = Find(job_id)) {
    job->OnResult(trial_id, measurement);
  }
}

void JobManager::Shutdown() {
  std::map<int64_t, std::shared_ptr<Job>> jobs;
  {
    absl::MutexLock lock(&mu_);
    jobs.swap(jobs_);
  }
  for (auto& [id, job] : jobs) job->Cancel();
  for (auto& [id, job] : jobs) job->Join();
}

}  // namespace tunefleet::server
