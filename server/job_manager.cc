#include "server/job_manager.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "contract/names.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/registry.h"
#include "progress/stored_progress.h"
#include "search/strategy.h"
#include "search_space/build_space.h"
#include "server/memory_release.h"
#include "store/store.h"
#include "transfer/transfer.h"
#include "trial/trial_request.h"

namespace tunefleet::server {
namespace {

absl::Status AsInvalid(const absl::Status& s, absl::string_view field) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", s.message()));
}

// A user's template, when it runs `workload` (FindTemplateFor's check for a
// template not registered yet). Errors: NOT_FOUND.
absl::StatusOr<const templates::KernelTemplate*> UserTemplateFor(
    const templates::PendingTemplate& pending,
    const templates::Workload& workload) {
  const templates::KernelTemplate* t = pending.get();
  if (t->op() == workload.op() && t->Accepts(workload)) return t;
  return absl::NotFoundError(absl::StrCat(
      "template '", t->name(), "' does not run ", workload.Canonical()));
}

int ExecutorThreads(const JobLimits& limits) {
  if (limits.job_threads > 0) return limits.job_threads;
  return std::max(4, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

JobManager::JobManager(store::Store* store, LeaseScheduler* scheduler,
                       const base::Clock& clock, JobLimits limits)
    : store_(store),
      scheduler_(scheduler),
      clock_(clock),
      limits_(limits),
      executor_(std::make_unique<JobExecutor>(ExecutorThreads(limits))) {}

JobManager::~JobManager() {
  Shutdown();
  executor_->Stop();
}

absl::Status JobManager::Reserve() {
  absl::MutexLock lock(&mu_);
  if (active_ + reserved_ >= limits_.max_active_jobs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the server runs ", active_,
        " jobs and model jobs, its limit of active jobs "
        "(tunefleet-server --max-active-jobs ",
        limits_.max_active_jobs,
        "); wait for one to end or cancel one (tunefleet cancel ID)"));
  }
  ++reserved_;
  return absl::OkStatus();
}

void JobManager::Unreserve() {
  absl::MutexLock lock(&mu_);
  --reserved_;
}

int JobManager::active_jobs() {
  absl::MutexLock lock(&mu_);
  return active_;
}

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

absl::StatusOr<JobManager::Prepared> JobManager::Prepare(
    const tunefleet::v1::SubmitJobRequest& request,
    HistoryCache* history_cache) {
  // Every field that needs neither store nor registry, before anything
  // is registered or stored.
  TUNEFLEET_RETURN_IF_ERROR(validation::ValidateSubmitJobRequest(request));
  // A user's template first: it may define the workload's op. It is
  // parsed here and registered only once every check has passed, so that a
  // refused submission registers nothing (issue 34).
  std::string template_name = request.template_name();
  std::optional<templates::PendingTemplate> pending;
  if (request.has_template_spec()) {
    const tunefleet::v1::TemplateSpec& spec = request.template_spec();
    absl::StatusOr<templates::PendingTemplate> parsed =
        templates::ParseUserTemplate(spec.spec(), spec.format(), spec.source());
    if (!parsed.ok()) {
      if (absl::IsResourceExhausted(parsed.status())) return parsed.status();
      return AsInvalid(parsed.status(), "template_spec");
    }
    pending.emplace(*std::move(parsed));
    template_name = std::string(pending->get()->name());
  }
  absl::StatusOr<templates::Workload> workload = trial::WorkloadFromProto(
      request.workload(), pending ? pending->new_op() : nullptr);
  if (!workload.ok()) return AsInvalid(workload.status(), "workload");
  const tunefleet::v1::Strategy strategy =
      request.strategy() == tunefleet::v1::STRATEGY_UNSPECIFIED
          ? tunefleet::v1::STRATEGY_XGB
          : request.strategy();
  absl::StatusOr<const templates::KernelTemplate*> tmpl =
      pending ? UserTemplateFor(*pending, *workload)
              : templates::FindTemplateFor(*workload, template_name);
  if (!tmpl.ok()) return AsInvalid(tmpl.status(), "template_name");
  TUNEFLEET_ASSIGN_OR_RETURN(std::string key,
                             ChooseDeviceKey(request.device_key()));
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::DeviceInfo device,
                             store_->GetDevice(key));
  const templates::DeviceLimits limits = trial::LimitsFromDeviceInfo(device);
  if (absl::Status s = (*tmpl)->CheckWorkload(*workload, limits); !s.ok()) {
    return AsInvalid(s, "workload");
  }
  // Device-independent caps (buffers of at most 16 GiB, finite counts),
  // after the template's own check for its clearer messages.
  TUNEFLEET_RETURN_IF_ERROR(validation::ValidateTask(**tmpl, *workload));
  std::unique_ptr<search_space::SearchSpace> space =
      search_space::BuildSpace(**tmpl, *workload, limits);
  if (space->valid_size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no config of template ", (*tmpl)->name(), " fits ",
                     workload->Canonical(), " on device key ", key));
  }
  TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::TimingPolicy timing,
                             validation::ValidateTimingPolicy(request));
  // Accepted: a user's new template is registered now.
  if (pending && !pending->registered()) {
    const templates::KernelTemplate* checked = *tmpl;
    absl::StatusOr<const templates::KernelTemplate*> registered =
        templates::CommitUserTemplate(*std::move(pending));
    if (!registered.ok()) {
      if (absl::IsResourceExhausted(registered.status())) {
        return registered.status();
      }
      return AsInvalid(registered.status(), "template_spec");
    }
    if (*registered != checked) {
      // The same template, registered by another submission meanwhile: the
      // space reads the registered one (`checked` is gone).
      tmpl = *registered;
      space = search_space::BuildSpace(**tmpl, *workload, limits);
      if (space->valid_size() == 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("no config of template ", (*tmpl)->name(), " fits ",
                         workload->Canonical(), " on device key ", key));
      }
    }
  }
  // Created now by the manager's clock, which also times the deadline.
  const int64_t now = clock_.NowMs();
  JobSpec spec{
      {{*workload, *tmpl},
       key,
       strategy,
       static_cast<int64_t>(request.trials()),
       request.seed(),
       request.priority(),
       now,
       request.deadline_s() > 0 ? now + request.deadline_s() * 1000LL : 0},
      !request.skip_reference(),
      timing,
      request.early_stop(),
      {}};
  spec.space_size = space->valid_size();
  if (!request.no_transfer() && strategy == tunefleet::v1::STRATEGY_XGB) {
    const std::string name((*tmpl)->name());
    if (history_cache != nullptr && history_cache->contains(name)) {
      spec.history = history_cache->at(name);
    } else {
      absl::StatusOr<std::vector<search::HistoryGroup>> history =
          transfer::TransferHistory(*store_, **tmpl, kMaxHistoryRows);
      if (history.ok()) spec.history = *std::move(history);
      if (history_cache != nullptr) (*history_cache)[name] = spec.history;
    }
  }
  return Prepared{std::move(spec), std::move(device), std::move(space)};
}

absl::StatusOr<std::shared_ptr<Job>> JobManager::Submit(
    const tunefleet::v1::SubmitJobRequest& request) {
  TUNEFLEET_RETURN_IF_ERROR(Reserve());
  absl::Cleanup unreserve = [this] { Unreserve(); };
  TUNEFLEET_ASSIGN_OR_RETURN(Prepared prepared, Prepare(request));
  // Kept with the job, with the chosen key, so that it can be rebuilt.
  tunefleet::v1::SubmitJobRequest stored = request;
  stored.set_device_key(prepared.spec.device_key);
  return CreateAndLaunch(stored, std::move(prepared));
}

absl::StatusOr<std::shared_ptr<Job>> JobManager::CreateAndLaunch(
    const tunefleet::v1::SubmitJobRequest& request, Prepared prepared) {
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(request, &json).ok()) {
    return absl::InternalError("cannot encode the job request");
  }
  TUNEFLEET_ASSIGN_OR_RETURN(int64_t id,
                             store_->CreateJob(prepared.spec, json));
  return Launch(id, std::move(prepared), {});
}

absl::StatusOr<std::shared_ptr<Job>> JobManager::SubmitRevalidation(
    tunefleet::v1::SubmitJobRequest request, const std::string& driver_version,
    std::vector<store::RevalidationTarget>* targets) {
  request.set_strategy(tunefleet::v1::STRATEGY_GRID);
  request.set_trials(
      static_cast<uint32_t>(std::max<size_t>(1, targets->size())));
  request.set_skip_reference(true);
  request.set_no_transfer(true);
  request.set_early_stop(0);
  request.set_deadline_s(0);
  TUNEFLEET_ASSIGN_OR_RETURN(Prepared prepared, Prepare(request));
  std::erase_if(*targets, [&prepared](const store::RevalidationTarget& t) {
    return t.config_index >= prepared.space->raw_size() ||
           !prepared.space->IsValid(t.config_index) ||
           prepared.space->ConfigString(t.config_index) != t.config;
  });
  if (targets->empty()) {
    return absl::FailedPreconditionError(
        "no config to re-validate is in the template's space any more");
  }
  for (const store::RevalidationTarget& t : *targets) {
    prepared.spec.configs.push_back(t.config_index);
  }
  prepared.spec.budget = static_cast<int64_t>(targets->size());
  prepared.spec.driver_version = driver_version;
  request.set_trials(static_cast<uint32_t>(targets->size()));
  return CreateAndLaunch(request, std::move(prepared));
}

std::shared_ptr<Job> JobManager::Launch(int64_t id, Prepared prepared,
                                        JobResume resume, bool task) {
  auto job = std::make_shared<Job>(
      id, std::move(prepared.spec), std::move(prepared.device),
      std::move(prepared.space), store_, scheduler_, clock_, std::move(resume));
  {
    absl::MutexLock lock(&mu_);
    jobs_[id] = job;
    if (!task) ++active_;
  }
  if (!task) {
    job->Start(executor_.get(), [this, id, raw = job.get()] {
      Ended(id, raw, /*model=*/false, /*task=*/false);
    });
  }
  return job;
}

void JobManager::StartTask(const std::shared_ptr<Job>& task) {
  task->Start(executor_.get(), [this, id = task->id(), raw = task.get()] {
    Ended(id, raw, /*model=*/false, /*task=*/true);
  });
}

void JobManager::Ended(int64_t id, TrackedJob* job, bool model, bool task) {
  std::string final;
  if (!task) final = job->Progress().SerializeAsString();
  {
    absl::MutexLock lock(&mu_);
    if (model) {
      models_.erase(id);
    } else {
      jobs_.erase(id);
    }
    if (task) return;
    --active_;
    KeepEnded(id, std::move(final));
  }
  // The job's strategy, space and (a model job's) tasks are gone by now,
  // the job itself once its last step lets go of it (just after this):
  // then the store's cache of the pages they touched goes, and the
  // allocator's free pages go back to the system.
  // One such release at a time, however many jobs end.
  if (release_pending_.exchange(true)) return;
  executor_->PostAfter(absl::Milliseconds(100), [this] {
    release_pending_.store(false);
    store_->ReleaseMemory();
    ReleaseFreeMemory();
  });
}

void JobManager::KeepEnded(int64_t id, std::string progress) {
  ended_bytes_ += static_cast<int64_t>(progress.size());
  if (auto it = ended_.find(id); it != ended_.end()) {
    ended_bytes_ -= static_cast<int64_t>(it->second.size());
    it->second = std::move(progress);
  } else {
    ended_.emplace(id, std::move(progress));
  }
  while (!ended_.empty() &&
         (static_cast<int>(ended_.size()) > limits_.kept_ended_jobs ||
          ended_bytes_ > limits_.kept_ended_bytes)) {
    ended_bytes_ -= static_cast<int64_t>(ended_.begin()->second.size());
    ended_.erase(ended_.begin());  // the oldest id
  }
}

std::optional<tunefleet::v1::JobProgress> JobManager::EndedProgress(
    int64_t job_id) {
  absl::MutexLock lock(&mu_);
  auto it = ended_.find(job_id);
  if (it == ended_.end()) return std::nullopt;
  tunefleet::v1::JobProgress progress;
  if (!progress.ParseFromString(it->second)) return std::nullopt;
  return progress;
}

std::optional<tunefleet::v1::JobProgress> JobManager::LiveOrEndedProgress(
    int64_t job_id) {
  if (std::shared_ptr<TrackedJob> job = FindTracked(job_id)) {
    return job->Progress();
  }
  return EndedProgress(job_id);
}

absl::StatusOr<int> JobManager::ResumeJobs() {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> rows,
                             store_->UnfinishedJobs());
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::ModelJob> models,
                             store_->UnfinishedModelJobs());
  int resumed = 0;
  for (const store::ModelJob& row : models) {
    if (absl::Status s = ResumeModel(row); !s.ok()) {
      TUNEFLEET_RETURN_IF_ERROR(store_->SetModelJobState(
          row.id, tunefleet::v1::JOB_STATE_FAILED,
          absl::StrCat("cannot resume: ", s.message())));
      continue;
    }
    ++resumed;
  }
  for (const store::StoredJob& row : rows) {
    if (absl::Status s = Resume(row); !s.ok()) {
      TUNEFLEET_RETURN_IF_ERROR(
          store_->SetJobState(row.id, tunefleet::v1::JOB_STATE_FAILED,
                              absl::StrCat("cannot resume: ", s.message())));
      continue;
    }
    ++resumed;
  }
  return resumed;
}

absl::Status JobManager::Resume(const store::StoredJob& row) {
  TUNEFLEET_ASSIGN_OR_RETURN(auto rebuilt, Rebuild(row));
  Launch(row.id, std::move(rebuilt.first), std::move(rebuilt.second));
  return absl::OkStatus();
}

absl::StatusOr<std::pair<JobManager::Prepared, JobResume>> JobManager::Rebuild(
    const store::StoredJob& row) {
  if (row.request_json.empty()) {
    return absl::FailedPreconditionError(
        "the job was stored without its request (an older tunefleet)");
  }
  tunefleet::v1::SubmitJobRequest request;
  if (!google::protobuf::util::JsonStringToMessage(row.request_json, &request)
           .ok()) {
    return absl::DataLossError("the stored job request does not parse");
  }
  request.set_device_key(row.device_key);
  // The job's own finished trials are replayed to the model; transfer
  // would feed them in twice.
  request.set_no_transfer(true);
  TUNEFLEET_ASSIGN_OR_RETURN(Prepared prepared, Prepare(request));
  // The stored run's seed, budget and times rule, whatever the request said.
  prepared.spec.seed = row.seed;
  prepared.spec.budget = row.budget;
  prepared.spec.created_ms = row.created_ms;
  prepared.spec.deadline_ms = row.deadline_ms;
  TUNEFLEET_RETURN_IF_ERROR(store_->RequeueLeased(row.id));
  JobResume resume;
  TUNEFLEET_ASSIGN_OR_RETURN(resume.trials, store_->JobTrials(row.id));
  resume.reference_measured = row.reference_ns > 0;
  // A re-validation job measures its listed configs again, on its driver.
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::optional<store::Store::JobRevalidation> revalidation,
      store_->RevalidationOfJob(row.id));
  if (revalidation) {
    prepared.spec.configs = std::move(revalidation->config_indices);
    prepared.spec.driver_version = std::move(revalidation->driver_version);
    prepared.spec.measure_reference = false;
  }
  return std::make_pair(std::move(prepared), std::move(resume));
}

std::shared_ptr<Job> JobManager::Find(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::shared_ptr<TrackedJob> JobManager::FindTracked(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  if (auto it = models_.find(job_id); it != models_.end()) return it->second;
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::optional<ResultRow> JobManager::RowFor(
    int64_t job_id, int64_t /*trial_id*/, const tunefleet::v1::Measurement& m) {
  std::shared_ptr<Job> job = Find(job_id);
  if (job == nullptr) return std::nullopt;
  return job->Row(m);
}

void JobManager::OnReference(int64_t job_id, int64_t trial_id,
                             const tunefleet::v1::Measurement& m) {
  std::shared_ptr<Job> job = Find(job_id);
  if (job != nullptr && trial_id == job->reference_trial_id()) {
    job->OnReference(m);
  }
}

void JobManager::OnStored(const StoredResult& result) {
  if (std::shared_ptr<Job> job = Find(result.job_id)) {
    job->OnStored(result);
  }
}

void JobManager::OnRequeued(int64_t job_id, int64_t /*trial_id*/) {
  if (std::shared_ptr<Job> job = Find(job_id)) job->CountRequeued();
}

absl::StatusOr<tunefleet::v1::JobProgress> JobManager::Cancel(int64_t job_id) {
  if (std::shared_ptr<TrackedJob> job = FindTracked(job_id)) {
    if (!contract::IsFinalJobState(job->Progress().state())) {
      job->Cancel();
      job->Join();
      return job->Progress();
    }
  }
  if (absl::StatusOr<store::ModelJob> model = store_->GetModelJob(job_id);
      model.ok()) {
    if (contract::IsFinalJobState(model->state)) {
      return absl::FailedPreconditionError(
          absl::StrCat("model job ", job_id, " already ended (",
                       contract::JobStateName(model->state), ")"));
    }
    TUNEFLEET_RETURN_IF_ERROR(store_->SetModelJobState(
        job_id, tunefleet::v1::JOB_STATE_CANCELLED, ""));
    TUNEFLEET_ASSIGN_OR_RETURN(*model, store_->GetModelJob(job_id));
    return progress::StoredModelProgress(*store_, *model, true);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(store::StoredJob row, store_->GetJob(job_id));
  if (contract::IsFinalJobState(row.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " already ended (",
                     contract::JobStateName(row.state), ")"));
  }
  // Unfinished but not running here (a resume failed to start it).
  TUNEFLEET_RETURN_IF_ERROR(
      store_->SetJobState(job_id, tunefleet::v1::JOB_STATE_CANCELLED, ""));
  TUNEFLEET_ASSIGN_OR_RETURN(row, store_->GetJob(job_id));
  return progress::StoredProgress(*store_, row);
}

absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> JobManager::List(
    int64_t limit, int64_t before_id) {
  // Live and recently ended jobs as this server has them; the rest (and
  // every created time) from the store.
  return progress::StoredJobList(
      *store_, limit, before_id,
      [this](int64_t id,
             bool model) -> std::optional<tunefleet::v1::JobProgress> {
        std::optional<tunefleet::v1::JobProgress> p;
        if (std::shared_ptr<TrackedJob> live = FindTracked(id)) {
          if (auto* m = dynamic_cast<ModelJob*>(live.get())) {
            p = m->Summary();
          } else {
            p = live->Progress();
          }
        } else {
          p = EndedProgress(id);
        }
        if (p && model) {
          p->mutable_model()->clear_task_progress();
          p->mutable_model()->clear_latency_history();
        }
        return p;
      });
}

void JobManager::StopAll(void (TrackedJob::*stop)()) {
  std::map<int64_t, std::shared_ptr<Job>> jobs;
  std::map<int64_t, std::shared_ptr<ModelJob>> models;
  {
    absl::MutexLock lock(&mu_);
    jobs.swap(jobs_);
    models.swap(models_);
  }
  // Model jobs first: each stops its own tasks' jobs the same way.
  for (auto& [id, model] : models) (*model.*stop)();
  for (auto& [id, model] : models) model->Join();
  for (auto& [id, job] : jobs) (*job.*stop)();
  for (auto& [id, job] : jobs) job->Join();
}

void JobManager::CancelAll() { StopAll(&TrackedJob::Cancel); }

void JobManager::Shutdown() {
  StopAll(&TrackedJob::Interrupt);
  // The rows of leased trials are pending (leases live in the scheduler):
  // their attempts so far go to the store for the next server.
  scheduler_->StoreLeaseAttempts();
}

}  // namespace tunefleet::server
