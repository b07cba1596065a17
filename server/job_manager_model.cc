// JobManager's model jobs: submitting, storing and resuming them
// (job_manager.h).
#include <algorithm>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/model_job_fields.h"
#include "contract/names.h"
#include "google/protobuf/util/json_util.h"
#include "progress/stored_progress.h"
#include "server/job_manager.h"

namespace tunefleet::server {
namespace {

// The job request of a model's task `i` on device key `key`.
tunefleet::v1::SubmitJobRequest TaskRequest(
    const tunefleet::v1::SubmitModelJobRequest& model, int i,
    const std::string& key) {
  // Its trials are the model's (a cap; grants decide).
  tunefleet::v1::SubmitJobRequest r = contract::JobWideRequest(model);
  *r.mutable_workload() = model.tasks(i).workload();
  r.set_template_name(model.tasks(i).template_name());
  r.set_device_key(key);
  r.set_seed(model.seed() + static_cast<uint64_t>(i));
  return r;
}

tunefleet::v1::SkippedTask Skipped(int i, absl::string_view reason) {
  tunefleet::v1::SkippedTask s;
  s.set_task_index(static_cast<uint32_t>(i));
  s.set_reason(std::string(reason));
  return s;
}

// What a task's job may expect to measure: its share of the budget.
int64_t BudgetHint(const tunefleet::v1::SubmitModelJobRequest& model) {
  return std::max<int64_t>(1, model.trials() / std::max(1, model.tasks_size()));
}

}  // namespace

absl::StatusOr<std::vector<JobManager::PreparedTask>>
JobManager::PrepareModelTasks(
    const tunefleet::v1::SubmitModelJobRequest& request, const std::string& key,
    const std::vector<int>& indices, bool strict,
    std::vector<tunefleet::v1::SkippedTask>* skipped) {
  HistoryCache history;
  std::set<std::string> measured;  // workloads whose reference is timed
  std::vector<PreparedTask> out;
  for (int i : indices) {
    tunefleet::v1::SubmitJobRequest job = TaskRequest(request, i, key);
    absl::StatusOr<Prepared> prepared = Prepare(job, &history);
    if (!prepared.ok()) {
      if (strict && !absl::IsFailedPrecondition(prepared.status())) {
        return absl::Status(
            prepared.status().code(),
            absl::StrCat("tasks[", i, "].", prepared.status().message()));
      }
      skipped->push_back(Skipped(i, prepared.status().message()));
      continue;
    }
    // One task per workload times the naive reference kernel.
    const bool first =
        measured.insert(prepared->spec.workload.Canonical()).second;
    job.set_skip_reference(!first);
    prepared->spec.measure_reference = first;
    prepared->spec.granted_budget = true;
    prepared->spec.budget_hint = BudgetHint(request);
    out.push_back({i, std::move(job), *std::move(prepared)});
  }
  return out;
}

absl::StatusOr<std::vector<ModelTaskSlot>> JobManager::StoreModelTasks(
    const store::ModelJob& row, std::vector<PreparedTask> tasks) {
  std::vector<ModelTaskSlot> slots;
  for (PreparedTask& task : tasks) {
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(task.request, &json)
             .ok()) {
      return absl::InternalError("cannot encode a task's job request");
    }
    store::JobParams params = task.prepared.spec;
    params.budget = row.budget;  // the cap; jobs.granted holds the grants
    params.model_job_id = row.id;
    params.task_index = task.task_index;
    TUNEFLEET_ASSIGN_OR_RETURN(int64_t id, store_->CreateJob(params, json));
    task.prepared.spec.budget = 0;  // nothing granted yet
    ModelTaskSlot slot;
    slot.task_index = task.task_index;
    slot.job_id = id;
    slot.job = Launch(id, std::move(task.prepared), {}, /*task=*/true);
    slots.push_back(std::move(slot));
  }
  return slots;
}

absl::StatusOr<std::shared_ptr<ModelJob>> JobManager::SubmitModel(
    const tunefleet::v1::SubmitModelJobRequest& request,
    tunefleet::v1::SubmitModelJobResponse* response) {
  if (request.tasks_size() > limits_.max_model_tasks) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tasks: ", request.tasks_size(),
                     " tasks exceed the server's limit of tasks per model job "
                     "(tunefleet-server --max-model-tasks ",
                     limits_.max_model_tasks,
                     "); tune the model's heaviest tasks, or split it"));
  }
  TUNEFLEET_RETURN_IF_ERROR(Reserve());
  absl::Cleanup unreserve = [this] { Unreserve(); };
  TUNEFLEET_RETURN_IF_ERROR(validation::ValidateSubmitModelJobRequest(request));
  TUNEFLEET_ASSIGN_OR_RETURN(std::string key,
                             ChooseDeviceKey(request.device_key()));
  TUNEFLEET_RETURN_IF_ERROR(store_->GetDevice(key).status());
  std::vector<int> indices(request.tasks_size());
  for (int i = 0; i < request.tasks_size(); ++i) indices[i] = i;
  std::vector<tunefleet::v1::SkippedTask> skipped;
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::vector<PreparedTask> tasks,
      PrepareModelTasks(request, key, indices, /*strict=*/true, &skipped));
  if (tasks.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no task of the model can be tuned on device key ", key,
                     "; task 0: ", skipped.front().reason()));
  }
  tunefleet::v1::SubmitModelJobRequest stored = request;
  stored.set_device_key(key);
  // The ONNX bytes go to their own table (model_job_models), not the JSON.
  stored.clear_onnx_model();
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(stored, &json).ok()) {
    return absl::InternalError("cannot encode the model job request");
  }
  const int64_t now = clock_.NowMs();
  store::ModelJobParams params;
  params.model_name = request.model_name();
  params.device_key = key;
  params.strategy = request.strategy() == tunefleet::v1::STRATEGY_UNSPECIFIED
                        ? tunefleet::v1::STRATEGY_XGB
                        : request.strategy();
  params.task_scheduler =
      request.task_scheduler() == tunefleet::v1::TASK_SCHEDULER_UNSPECIFIED
          ? tunefleet::v1::TASK_SCHEDULER_GRADIENT
          : request.task_scheduler();
  params.budget = request.trials();
  params.seed = request.seed();
  params.priority = request.priority();
  params.created_ms = now;
  params.deadline_ms =
      request.deadline_s() > 0 ? now + request.deadline_s() * 1000LL : 0;
  params.onnx_model = request.onnx_model();
  params.input_shapes.assign(request.input_shapes().begin(),
                             request.input_shapes().end());
  TUNEFLEET_ASSIGN_OR_RETURN(int64_t id, store_->CreateModelJob(params, json));
  TUNEFLEET_ASSIGN_OR_RETURN(store::ModelJob row, store_->GetModelJob(id));
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<ModelTaskSlot> slots,
                             StoreModelTasks(row, std::move(tasks)));
  response->set_job_id(id);
  response->set_device_key(key);
  for (const auto& s : skipped) *response->add_skipped() = s;
  return LaunchModel(std::move(row), stored, std::move(slots),
                     std::move(skipped));
}

absl::StatusOr<ModelTaskSlot> JobManager::ResumeModelTask(
    const store::ModelJob& row, const store::StoredJob& task, uint32_t weight) {
  ModelTaskSlot slot;
  slot.task_index = task.task_index;
  slot.weight = weight;
  slot.job_id = task.id;
  slot.granted = task.granted;
  if (!contract::IsFinalJobState(task.state)) {
    absl::StatusOr<std::pair<Prepared, JobResume>> rebuilt = Rebuild(task);
    if (rebuilt.ok()) {
      Prepared& prepared = rebuilt->first;
      prepared.spec.granted_budget = true;
      prepared.spec.budget = task.granted;
      prepared.spec.budget_hint = std::max<int64_t>(1, task.granted);
      slot.job = Launch(task.id, std::move(prepared),
                        std::move(rebuilt->second), /*task=*/true);
      return slot;
    }
    TUNEFLEET_RETURN_IF_ERROR(store_->SetJobState(
        task.id, tunefleet::v1::JOB_STATE_FAILED,
        absl::StrCat("cannot resume: ", rebuilt.status().message())));
  }
  TUNEFLEET_ASSIGN_OR_RETURN(store::StoredJob ended, store_->GetJob(task.id));
  TUNEFLEET_ASSIGN_OR_RETURN(slot.stored,
                             progress::StoredProgress(*store_, ended));
  return slot;
}

absl::Status JobManager::ResumeModel(const store::ModelJob& row) {
  tunefleet::v1::SubmitModelJobRequest request;
  if (!google::protobuf::util::JsonStringToMessage(row.request_json, &request)
           .ok()) {
    return absl::DataLossError("the stored model job request does not parse");
  }
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> rows,
                             store_->ModelTaskJobs(row.id));
  std::vector<ModelTaskSlot> slots;
  std::set<int> stored;
  for (const store::StoredJob& task : rows) {
    if (task.task_index < 0 || task.task_index >= request.tasks_size()) {
      continue;
    }
    TUNEFLEET_ASSIGN_OR_RETURN(
        ModelTaskSlot slot,
        ResumeModelTask(row, task, request.tasks(task.task_index).weight()));
    slots.push_back(std::move(slot));
    stored.insert(task.task_index);
  }
  // Tasks whose rows a stopped server never wrote, or skipped ones.
  std::vector<int> missing;
  for (int i = 0; i < request.tasks_size(); ++i) {
    if (!stored.contains(i)) missing.push_back(i);
  }
  std::vector<tunefleet::v1::SkippedTask> skipped;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<PreparedTask> fresh,
                             PrepareModelTasks(request, row.device_key, missing,
                                               /*strict=*/false, &skipped));
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<ModelTaskSlot> added,
                             StoreModelTasks(row, std::move(fresh)));
  for (auto& slot : added) slots.push_back(std::move(slot));
  std::sort(slots.begin(), slots.end(),
            [](const ModelTaskSlot& a, const ModelTaskSlot& b) {
              return a.task_index < b.task_index;
            });
  if (slots.empty()) {
    return absl::FailedPreconditionError("no task of the model can be tuned");
  }
  return LaunchModel(row, request, std::move(slots), std::move(skipped))
      .status();
}

absl::StatusOr<std::shared_ptr<ModelJob>> JobManager::LaunchModel(
    store::ModelJob row, const tunefleet::v1::SubmitModelJobRequest& request,
    std::vector<ModelTaskSlot> slots,
    std::vector<tunefleet::v1::SkippedTask> skipped) {
  std::vector<search::SchedulerTask> tasks;
  for (ModelTaskSlot& slot : slots) {
    slot.weight = request.tasks(slot.task_index).weight();
    TUNEFLEET_ASSIGN_OR_RETURN(
        search::SchedulerTask task,
        progress::SchedulerTaskOf(request.tasks(slot.task_index)));
    tasks.push_back(std::move(task));
  }
  search::TaskScheduler scheduler(std::move(tasks),
                                  progress::SchedulerOptionsOf(row, request));
  for (size_t k = 0; k < slots.size(); ++k) {
    scheduler.RestoreGranted(k, slots[k].granted);
  }
  const int64_t id = row.id;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::LatencyPoint> history,
                             store_->ModelLatencyHistory(id));
  auto model = std::make_shared<ModelJob>(
      std::move(row), std::move(slots), std::move(skipped),
      std::move(scheduler), store_, scheduler_, clock_, std::move(history),
      model_run_);
  {
    absl::MutexLock lock(&mu_);
    models_[id] = model;
    ++active_;
  }
  // The model job listens to its tasks from its construction on.
  for (const ModelTaskSlot& slot : model->tasks()) {
    if (slot.job) StartTask(slot.job);
  }
  model->Start(executor_.get(), [this, id, raw = model.get()] {
    Ended(id, raw, /*model=*/true, /*task=*/false);
  });
  return model;
}

}  // namespace tunefleet::server
