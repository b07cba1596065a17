#include "progress/stored_progress.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/names.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/registry.h"
#include "trial/trial_request.h"

namespace tunefleet::progress {

search::TaskResults ResultsOf(const tunefleet::v1::JobProgress& job) {
  search::TaskResults r;
  r.done = job.trials_done();
  r.best_ns = job.has_best() ? job.best().time_ns() : 0;
  r.reference_ns = job.reference_time_ns();
  r.ended = contract::IsFinalJobState(job.state());
  if (r.ended) {
    r.ended_reason =
        job.state() == tunefleet::v1::JOB_STATE_DONE && job.message().empty()
            ? "its job ended done"
            : absl::StrCat("its job ended ",
                           contract::JobStateName(job.state()),
                           job.message().empty() ? "" : ": ", job.message());
  }
  return r;
}

absl::StatusOr<search::SchedulerTask> SchedulerTaskOf(
    const tunefleet::v1::ModelTask& task) {
  TUNEFLEET_ASSIGN_OR_RETURN(templates::Workload workload,
                             trial::WorkloadFromProto(task.workload()));
  TUNEFLEET_ASSIGN_OR_RETURN(
      const templates::KernelTemplate* tmpl,
      templates::FindTemplateFor(workload, task.template_name()));
  return search::SchedulerTask{workload.Canonical(), workload.op(),
                               static_cast<double>(task.weight()),
                               tmpl->Flops(workload)};
}

search::TaskSchedulerOptions SchedulerOptionsOf(
    const store::ModelJob& row,
    const tunefleet::v1::SubmitModelJobRequest& request) {
  search::TaskSchedulerOptions o;
  o.rule = row.task_scheduler == tunefleet::v1::TASK_SCHEDULER_ROUND_ROBIN
               ? search::TaskSchedulerOptions::Rule::kRoundRobin
               : search::TaskSchedulerOptions::Rule::kGradient;
  o.budget = row.budget;
  o.batch = request.batch_trials();
  o.seed = row.seed;
  return o;
}

tunefleet::v1::JobProgress ModelJobProgress(
    const store::ModelJob& row, const std::vector<ModelTaskView>& tasks,
    const search::TaskScheduler& scheduler,
    const std::vector<tunefleet::v1::SkippedTask>& skipped,
    const std::vector<tunefleet::v1::LatencyPoint>& history, bool with_tasks) {
  tunefleet::v1::JobProgress p;
  p.set_job_id(row.id);
  p.set_state(row.state);
  p.set_message(row.message);
  p.set_trials_total(static_cast<uint32_t>(row.budget));
  p.set_device_key(row.device_key);
  p.set_strategy(row.strategy);
  p.set_priority(row.priority);
  p.set_created_unix_ms(row.created_ms);
  tunefleet::v1::ModelProgress* m = p.mutable_model();
  m->set_model_name(row.model_name);
  m->set_task_scheduler(row.task_scheduler);
  bool complete = false;
  m->set_latency_ns(scheduler.LatencyNs(&complete));
  m->set_latency_complete(complete);
  m->set_naive_latency_ns(scheduler.NaiveLatencyNs());
  m->set_tasks(static_cast<uint32_t>(tasks.size()));
  uint32_t done = 0, requeued = 0, stopped = 0, over_work_group_limit = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const tunefleet::v1::JobProgress& job = *tasks[i].job;
    done += job.trials_done();
    requeued += job.trials_requeued();
    over_work_group_limit += job.configs_over_work_group_limit();
    for (const auto& [code, count] : job.errors()) {
      (*p.mutable_errors())[code] += count;
    }
    const std::string stopped_reason = scheduler.StoppedReason(i);
    if (!stopped_reason.empty()) ++stopped;
    if (!with_tasks) continue;
    tunefleet::v1::ModelTaskProgress* t = m->add_task_progress();
    t->set_task_index(static_cast<uint32_t>(tasks[i].task_index));
    t->set_weight(tasks[i].weight);
    t->set_trials_granted(static_cast<uint32_t>(scheduler.granted(i)));
    *t->mutable_job() = job;
    t->set_stopped_reason(stopped_reason);
  }
  p.set_trials_done(done);
  p.set_trials_requeued(requeued);
  p.set_configs_over_work_group_limit(over_work_group_limit);
  m->set_tasks_stopped(stopped);
  for (const auto& s : skipped) *m->add_skipped() = s;
  if (with_tasks) {
    for (const auto& point : history) *m->add_latency_history() = point;
  }
  return p;
}

absl::StatusOr<tunefleet::v1::JobProgress> StoredModelProgress(
    store::Store& store, const store::ModelJob& row, bool with_tasks) {
  tunefleet::v1::SubmitModelJobRequest request;
  if (!google::protobuf::util::JsonStringToMessage(row.request_json, &request)
           .ok()) {
    return absl::DataLossError(absl::StrCat("model job ", row.id,
                                            ": its stored request does not "
                                            "parse"));
  }
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> rows,
                             store.ModelTaskJobs(row.id));
  std::map<int, const store::StoredJob*> by_index;
  for (const store::StoredJob& r : rows) by_index[r.task_index] = &r;
  std::vector<search::SchedulerTask> tasks;
  std::vector<tunefleet::v1::JobProgress> progress;
  std::vector<tunefleet::v1::SkippedTask> skipped;
  std::vector<int> indices;
  std::vector<int64_t> granted;
  for (int i = 0; i < request.tasks_size(); ++i) {
    auto it = by_index.find(i);
    absl::StatusOr<search::SchedulerTask> task =
        SchedulerTaskOf(request.tasks(i));
    if (it == by_index.end() || !task.ok()) {
      tunefleet::v1::SkippedTask s;
      s.set_task_index(static_cast<uint32_t>(i));
      s.set_reason(task.ok() ? "not tuned (skipped when submitted)"
                             : std::string(task.status().message()));
      skipped.push_back(std::move(s));
      continue;
    }
    TUNEFLEET_ASSIGN_OR_RETURN(tunefleet::v1::JobProgress p,
                               StoredProgress(store, *it->second));
    tasks.push_back(*std::move(task));
    progress.push_back(std::move(p));
    indices.push_back(i);
    granted.push_back(it->second->granted);
  }
  search::TaskScheduler scheduler(tasks, SchedulerOptionsOf(row, request));
  std::vector<ModelTaskView> views;
  for (size_t k = 0; k < tasks.size(); ++k) {
    scheduler.RestoreGranted(k, granted[k]);
    scheduler.Update(k, ResultsOf(progress[k]));
    views.push_back(
        {indices[k], request.tasks(indices[k]).weight(), &progress[k]});
  }
  std::vector<tunefleet::v1::LatencyPoint> history;
  if (with_tasks) {
    TUNEFLEET_ASSIGN_OR_RETURN(history, store.ModelLatencyHistory(row.id));
  }
  tunefleet::v1::JobProgress out =
      ModelJobProgress(row, views, scheduler, skipped, history, with_tasks);
  TUNEFLEET_ASSIGN_OR_RETURN(
      std::optional<tunefleet::v1::MeasuredLatency> measured,
      store.GetModelMeasurement(row.id));
  if (measured) {
    if (!with_tasks) measured->clear_layers();
    *out.mutable_model()->mutable_measured() = *std::move(measured);
  }
  return out;
}

absl::StatusOr<tunefleet::v1::JobProgress> StoredProgress(
    store::Store& store, const store::StoredJob& row) {
  TUNEFLEET_ASSIGN_OR_RETURN(store::JobTally tally, store.TallyJob(row.id));
  tunefleet::v1::JobProgress progress;
  progress.set_job_id(row.id);
  progress.set_state(row.state);
  progress.set_message(row.message);
  // A model job's task has the trials granted to it so far, as its live
  // job counts them; its row's budget is only the model's cap.
  progress.set_trials_total(
      static_cast<uint32_t>(row.model_job_id > 0 ? row.granted : row.budget));
  progress.set_space_size(row.space_size);
  progress.set_reference_time_ns(row.reference_ns);
  progress.set_trials_done(static_cast<uint32_t>(tally.done));
  for (const auto& [code, count] : tally.errors) {
    (*progress.mutable_errors())[code] = count;
  }
  if (tally.best) *progress.mutable_best() = *tally.best;
  progress.set_workload_key(row.workload);
  progress.set_device_key(row.device_key);
  progress.set_strategy(row.strategy);
  progress.set_priority(row.priority);
  progress.set_template_name(row.template_name);
  progress.set_created_unix_ms(row.created_ms);
  return progress;
}

absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> StoredJobList(
    store::Store& store, int64_t limit, int64_t before_id,
    const KnownProgress& known) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::StoredJob> jobs,
                             store.ListJobs(limit, before_id));
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<store::ModelJob> models,
                             store.ListModelJobs(limit, before_id));
  // Both newest first; merged by id, the newest `limit`.
  std::vector<tunefleet::v1::JobProgress> out;
  size_t j = 0, m = 0;
  while ((limit <= 0 || static_cast<int64_t>(out.size()) < limit) &&
         (j < jobs.size() || m < models.size())) {
    const bool model =
        m < models.size() && (j == jobs.size() || models[m].id > jobs[j].id);
    const int64_t id = model ? models[m].id : jobs[j].id;
    const int64_t created_ms =
        model ? models[m].created_ms : jobs[j].created_ms;
    std::optional<tunefleet::v1::JobProgress> p;
    if (known) p = known(id, model);
    if (p) {
      p->set_created_unix_ms(created_ms);
    } else if (model) {
      TUNEFLEET_ASSIGN_OR_RETURN(
          p, StoredModelProgress(store, models[m], /*with_tasks=*/false));
    } else {
      TUNEFLEET_ASSIGN_OR_RETURN(p, StoredProgress(store, jobs[j]));
    }
    (model ? m : j)++;
    out.push_back(*std::move(p));
  }
  return out;
}

}  // namespace tunefleet::progress
