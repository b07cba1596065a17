#include "server/model_job.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "contract/names.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "logging/log.h"
#include "progress/stored_progress.h"

namespace tunefleet::server {
namespace {

// How often at most the model job reads its tasks' progress: results land
// between reads, and a task that finished its grant waits at most this
// long for the next one.
constexpr absl::Duration kPollInterval = absl::Milliseconds(25);
// How often it looks at the fleet (agents that connected: room for more
// grants) and its deadline while nothing else wakes it.
constexpr absl::Duration kFleetRecheck = absl::Milliseconds(200);

}  // namespace

ModelJob::ModelJob(store::ModelJob row, std::vector<ModelTaskSlot> tasks,
                   std::vector<tunefleet::v1::SkippedTask> skipped,
                   search::TaskScheduler scheduler, store::Store* store,
                   LeaseScheduler* fleet, const base::Clock& clock,
                   std::vector<tunefleet::v1::LatencyPoint> history,
                   ModelRunFn measure_run)
    : row_(std::move(row)),
      tasks_(std::move(tasks)),
      skipped_(std::move(skipped)),
      scheduler_(std::move(scheduler)),
      store_(store),
      fleet_(fleet),
      clock_(clock),
      measure_run_(std::move(measure_run)) {
  FindSiblings();
  std::vector<tunefleet::v1::JobProgress> progress = Observe();
  {
    absl::MutexLock lock(&mu_);
    for (auto& point : history) {
      *progress_.mutable_model()->add_latency_history() = std::move(point);
    }
    Publish(progress);
    progress_.set_state(tunefleet::v1::JOB_STATE_QUEUED);
  }
  // The tasks' progress wakes the model job. `this` outlives the
  // listeners: they go when it ends (ReleaseTasks) or is destroyed.
  listener_ids_.resize(tasks_.size(), -1);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].job) {
      listener_ids_[i] = tasks_[i].job->AddListener([this] { TaskChanged(); });
    }
  }
}

ModelJob::~ModelJob() {
  if (measure_thread_.joinable()) measure_thread_.join();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].job) tasks_[i].job->RemoveListener(listener_ids_[i]);
  }
}

void ModelJob::TaskChanged() { Wake(); }

void ModelJob::FindSiblings() {
  // The template and the workload without its attributes.
  auto kind = [](const Job& job) {
    const store::JobParams& p = job.spec();
    std::string key = absl::StrCat(p.tmpl->name(), " ", p.workload.op());
    for (const templates::Dim& d : p.workload.dims()) {
      absl::StrAppend(&key, " ", d.name, "=", d.value);
    }
    return absl::StrCat(key, " ", static_cast<int>(p.workload.dtype()));
  };
  std::map<std::string, std::vector<size_t>> by_kind;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].job) by_kind[kind(*tasks_[i].job)].push_back(i);
  }
  siblings_.assign(tasks_.size(), {});
  shared_.assign(tasks_.size(), "");
  for (const auto& [key, group] : by_kind) {
    for (size_t i : group) {
      for (size_t j : group) {
        if (j != i) siblings_[i].push_back(j);
      }
    }
  }
}

void ModelJob::ShareBestConfigs(
    const std::vector<tunefleet::v1::JobProgress>& tasks) {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (siblings_[i].empty() || !tasks[i].has_best()) continue;
    const tunefleet::v1::TuningRecord& best = tasks[i].best();
    std::string config = best.config().SerializeAsString();
    if (config == shared_[i]) continue;
    shared_[i] = std::move(config);
    for (size_t j : siblings_[i]) {
      if (!tasks_[j].job) continue;
      if (tasks[j].has_best() && tasks[j].best().time_ns() <= best.time_ns()) {
        continue;
      }
      tasks_[j].job->Suggest(best.config());
    }
  }
}

std::string ModelJob::MeasuringText() const {
  return absl::StrCat(
      "measuring the tuned model end to end on an agent of device key ",
      row_.device_key);
}

tunefleet::v1::JobProgress ModelJob::Summary() {
  absl::MutexLock lock(&mu_);
  tunefleet::v1::JobProgress p = progress_;
  p.mutable_model()->clear_task_progress();
  p.mutable_model()->clear_latency_history();
  if (p.model().has_measured()) {
    p.mutable_model()->mutable_measured()->clear_layers();
  }
  return p;
}

std::vector<tunefleet::v1::JobProgress> ModelJob::Observe() {
  std::vector<tunefleet::v1::JobProgress> out;
  out.reserve(tasks_.size());
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const ModelTaskSlot& slot = tasks_[i];
    out.push_back(slot.job ? slot.job->Progress() : slot.stored);
    scheduler_.Update(i, progress::ResultsOf(out.back()));
  }
  return out;
}

void ModelJob::Publish(const std::vector<tunefleet::v1::JobProgress>& tasks) {
  std::vector<progress::ModelTaskView> views;
  views.reserve(tasks_.size());
  for (size_t i = 0; i < tasks_.size(); ++i) {
    views.push_back({tasks_[i].task_index, tasks_[i].weight, &tasks[i]});
  }
  // The history keeps a point whenever the estimate changed.
  tunefleet::v1::ModelProgress* model = progress_.mutable_model();
  google::protobuf::RepeatedPtrField<tunefleet::v1::LatencyPoint> history;
  history.Swap(model->mutable_latency_history());
  // A partial sum (some workload without a time yet) is no estimate.
  bool complete = false;
  const double latency = scheduler_.LatencyNs(&complete);
  uint32_t done = 0;
  for (const auto& t : tasks) done += t.trials_done();
  if (complete && latency > 0 &&
      (history.empty() || history.rbegin()->latency_ns() != latency)) {
    tunefleet::v1::LatencyPoint* point = history.Add();
    point->set_trials_done(done);
    point->set_latency_ns(latency);
    if (absl::Status s =
            store_->AddModelLatencyPoint(row_.id, history.size() - 1, *point);
        !s.ok()) {
      logging::Error("[server] model job {}: storing its latency history: {}",
                     row_.id, std::string(s.message()));
    }
  }
  store::ModelJob row = row_;
  row.state = progress_.state();
  row.message = progress_.message();
  tunefleet::v1::JobProgress next =
      progress::ModelJobProgress(row, views, scheduler_, skipped_, {}, true);
  next.mutable_model()->mutable_latency_history()->Swap(&history);
  if (measured_) *next.mutable_model()->mutable_measured() = *measured_;
  if (measuring_ && !measured_) next.set_waiting_reason(MeasuringText());
  for (const auto& t : tasks) {
    for (int64_t id : t.in_flight_trial_ids()) next.add_in_flight_trial_ids(id);
  }
  if (next.SerializeAsString() == progress_.SerializeAsString()) return;
  progress_ = std::move(next);
  Changed();
}

bool ModelJob::PastDeadline() const {
  return row_.deadline_ms > 0 && clock_.NowMs() >= row_.deadline_ms;
}

void ModelJob::GrantWhatFits(
    const std::vector<tunefleet::v1::JobProgress>& tasks) {
  // Trials granted and not yet measured, by tasks still running.
  int64_t outstanding = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks_[i].job || contract::IsFinalJobState(tasks[i].state())) continue;
    outstanding +=
        std::max<int64_t>(0, scheduler_.granted(i) - tasks[i].trials_done());
  }
  const int64_t room = std::max<int64_t>(1, fleet_->Capacity(row_.device_key));
  while (outstanding < room) {
    std::optional<search::Grant> grant = scheduler_.Next(false);
    if (!grant) grant = scheduler_.Next(true);
    if (!grant) return;
    ModelTaskSlot& slot = tasks_[grant->task];
    if (absl::Status s = store_->SetTaskGranted(
            slot.job_id, scheduler_.granted(grant->task));
        !s.ok()) {
      logging::Error("[server] model job {}: storing a grant: {}", row_.id,
                     std::string(s.message()));
    }
    slot.job->Grant(grant->trials);
    outstanding += grant->trials;
  }
}

void ModelJob::CloseTasks() {
  for (ModelTaskSlot& slot : tasks_) {
    if (slot.job) slot.job->Close();
  }
}

bool ModelJob::AllTasksEnded() const {
  for (const ModelTaskSlot& slot : tasks_) {
    if (slot.job && !slot.job->ended()) return false;
  }
  return true;
}

void ModelJob::ReleaseTasks() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    ModelTaskSlot& slot = tasks_[i];
    if (!slot.job) continue;
    slot.job->RemoveListener(listener_ids_[i]);
    slot.stored = slot.job->Progress();
    slot.job.reset();
  }
}

bool ModelJob::Step() {
  if (!set_up_) {
    set_up_ = true;
    if (!SetUp()) {
      // Its tasks never got a grant; they end with it.
      for (ModelTaskSlot& slot : tasks_) {
        if (slot.job) slot.job->Cancel();
      }
      failed_ = true;
    }
  }
  if (failed_) {
    if (!AllTasksEnded()) return false;  // each task's end wakes this
    ReleaseTasks();
    return true;
  }
  bool cancelled, interrupted;
  {
    absl::MutexLock lock(&mu_);
    cancelled = cancelled_;
    interrupted = interrupted_;
  }
  if (cancelled) return Stop(interrupted);
  return Pass();
}

bool ModelJob::SetUp() {
  if (absl::Status s = store_->SetModelJobState(
          row_.id, tunefleet::v1::JOB_STATE_RUNNING, "");
      !s.ok()) {
    Finish(tunefleet::v1::JOB_STATE_FAILED,
           absl::StrCat("store: ", s.message()));
    return false;
  }
  absl::MutexLock lock(&mu_);
  progress_.set_state(tunefleet::v1::JOB_STATE_RUNNING);
  Changed();
  return true;
}

bool ModelJob::Stop(bool interrupted) {
  if (!stopping_) {
    stopping_ = true;
    for (ModelTaskSlot& slot : tasks_) {
      if (!slot.job) continue;
      if (interrupted) {
        slot.job->Interrupt();
      } else {
        slot.job->Cancel();
      }
    }
  }
  // Each task's end wakes this again.
  if (!AllTasksEnded()) return false;
  if (interrupted) {  // left unfinished for the next server
    ReleaseTasks();
    return true;
  }
  return End(tunefleet::v1::JOB_STATE_CANCELLED);
}

bool ModelJob::End(tunefleet::v1::JobState state) {
  std::vector<tunefleet::v1::JobProgress> tasks = Observe();
  {
    absl::MutexLock lock(&mu_);
    Publish(tasks);
  }
  ReleaseTasks();
  Finish(state, "");
  return true;
}

bool ModelJob::Pass() {
  WakeAfter(kFleetRecheck);
  // At most one pass per kPollInterval, whatever woke it.
  const absl::Time now_time = absl::Now();
  if (now_time < next_pass_) {
    WakeAfter(next_pass_ - now_time);
    return false;
  }
  next_pass_ = now_time + kPollInterval;
  uint64_t versions = 0;
  for (const ModelTaskSlot& slot : tasks_) {
    if (slot.job) versions += slot.job->version();
  }
  const std::pair<uint64_t, uint32_t> now{versions,
                                          fleet_->Capacity(row_.device_key)};
  // Nothing new: a task that ended (its listener woke this) has changed
  // its progress before, so only the end of every task remains to see.
  if (seen_ == now && (!reason_.empty() || !PastDeadline())) {
    if (!reason_.empty() && AllTasksEnded()) {
      return MeasureThenEnd();
    }
    return false;
  }
  seen_ = now;
  std::vector<tunefleet::v1::JobProgress> tasks = Observe();
  if (reason_.empty()) {
    int64_t done = 0;
    for (const auto& t : tasks) done += t.trials_done();
    if (PastDeadline()) {
      reason_ = absl::StrCat("deadline reached after ", done, " trials");
    } else if (scheduler_.Finished()) {
      reason_ =
          scheduler_.granted() >= scheduler_.budget()
              ? absl::StrCat("budget of ", scheduler_.budget(), " trials spent")
              : absl::StrCat(
                    "every task stopped (converged or "
                    "exhausted) after ",
                    scheduler_.granted(), " of ", scheduler_.budget(),
                    " trials");
    } else {
      ShareBestConfigs(tasks);
      GrantWhatFits(tasks);
    }
    if (!reason_.empty()) CloseTasks();
  }
  bool all_ended = true;
  for (const auto& t : tasks) {
    all_ended = all_ended && contract::IsFinalJobState(t.state());
  }
  {
    absl::MutexLock lock(&mu_);
    if (!reason_.empty()) progress_.set_message(reason_);
    Publish(tasks);
  }
  if (!reason_.empty() && all_ended && AllTasksEnded()) {
    return MeasureThenEnd();
  }
  return false;
}

bool ModelJob::MeasureThenEnd() {
  if (!measure_started_) {
    measure_started_ = true;
    // A measurement stored before a restart is kept.
    absl::StatusOr<std::optional<tunefleet::v1::MeasuredLatency>> stored =
        store_->GetModelMeasurement(row_.id);
    if (stored.ok() && stored->has_value()) {
      absl::MutexLock lock(&mu_);
      measured_ = **stored;
    } else {
      bool complete = false;
      const double estimate = scheduler_.LatencyNs(&complete);
      {
        absl::MutexLock lock(&mu_);
        measuring_ = true;
        progress_.set_waiting_reason(MeasuringText());
        Changed();
      }
      measure_thread_ = std::thread([this, estimate] {
        // A cancel or interrupt (the server stopping) ends the run.
        auto stopped = [this] {
          absl::MutexLock lock(&mu_);
          return cancelled_;
        };
        tunefleet::v1::MeasuredLatency m;
        if (measure_run_) {
          m = MeasureModelJob(*store_, row_, estimate, measure_run_, {},
                              clock_.NowMs(), stopped);
        } else {
          m.set_estimate_ns(estimate);
          m.set_measured_ms(clock_.NowMs());
          m.set_missing_reason("this server measures no model end to end");
        }
        // Stopped: not measured; a resumed job measures again.
        if (stopped()) {
          Wake();
          return;
        }
        if (absl::Status s = store_->SetModelMeasurement(row_.id, m); !s.ok()) {
          logging::Error(
              "[server] model job {}: storing its measured latency: {}",
              row_.id, std::string(s.message()));
        }
        {
          absl::MutexLock lock(&mu_);
          measured_ = std::move(m);
        }
        Wake();
      });
      return false;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    if (!measured_) return false;  // its thread wakes this when done
  }
  return End(tunefleet::v1::JOB_STATE_DONE);
}

void ModelJob::Finish(tunefleet::v1::JobState state,
                      const std::string& reason) {
  TrackedJob::Finish(state, reason, [this, state](const std::string& message) {
    return store_->SetModelJobState(row_.id, state, message);
  });
}

}  // namespace tunefleet::server
