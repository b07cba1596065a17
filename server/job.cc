#include "server/job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "logging/log.h"
#include "search_space/task_features.h"
#include "store/store.h"
#include "trial/trial_request.h"

namespace tunefleet::server {

using tunefleet::v1::Measurement;

Job::Job(int64_t id, JobSpec spec, tunefleet::v1::DeviceInfo device,
         std::unique_ptr<search_space::SearchSpace> space, store::Store* store,
         LeaseScheduler* scheduler, const base::Clock& clock, JobResume resume)
    : id_(id),
      spec_(std::move(spec)),
      device_(std::move(device)),
      space_(std::move(space)),
      space_size_(space_->valid_size()),
      store_(store),
      scheduler_(scheduler),
      clock_(clock),
      resume_(std::move(resume)) {
  budget_ = spec_.budget;
  closed_ = !spec_.granted_budget;
  progress_.set_job_id(id_);
  progress_.set_state(tunefleet::v1::JOB_STATE_QUEUED);
  progress_.set_trials_total(static_cast<uint32_t>(budget_));
  progress_.set_space_size(space_->valid_size());
  size_t history_rows = 0;
  for (const auto& g : spec_.history) history_rows += g.labels.size();
  progress_.set_history_rows(static_cast<uint32_t>(history_rows));
  progress_.set_workload_key(spec_.workload.Canonical());
  progress_.set_device_key(spec_.device_key);
  progress_.set_strategy(spec_.strategy);
  progress_.set_priority(spec_.priority);
  progress_.set_template_name(std::string(spec_.tmpl->name()));
  // As the stored row has it (JobManager sets it before the row is made),
  // so that the live job's JSON equals `jobs --json`'s.
  progress_.set_created_unix_ms(spec_.created_ms);
}

// A job ends (its last step ran) before its last owner lets it go: its
// steps hold it while they run.
Job::~Job() = default;

void Job::Grant(int64_t trials) {
  {
    absl::MutexLock lock(&mu_);
    budget_ += trials;
    progress_.set_trials_total(static_cast<uint32_t>(budget_));
    Changed();
  }
  Wake();
}

void Job::Close() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  Wake();
}

void Job::SetMessage(const std::string& message) {
  absl::MutexLock lock(&mu_);
  progress_.set_message(message);
}

int64_t Job::Budget(bool* open) {
  absl::MutexLock lock(&mu_);
  *open = !closed_;
  return budget_;
}

void Job::CountRequeued() {
  absl::MutexLock lock(&mu_);
  progress_.set_trials_requeued(progress_.trials_requeued() + 1);
  Changed();
}

void Job::OnReference(const Measurement& m) {
  const double ns =
      m.error() == Measurement::OK ? trial::MedianNs(m.times_ns()) : 0;
  if (ns <= 0) {
    logging::Warn("[server] job {}: reference kernel: {} {}", id_,
                  Measurement::Error_Name(m.error()), m.error_message());
    return;
  }
  (void)store_->SetJobReference(id_, ns);
  absl::MutexLock lock(&mu_);
  progress_.set_reference_time_ns(ns);
  Changed();
}

ResultRow Job::Row(const Measurement& m) const {
  ResultRow row{m, 0, 0};
  if (m.error() == Measurement::OK) {
    // (TrialLedger checked that an OK result has a median time > 0.)
    row.time_ns = trial::MedianNs(m.times_ns());
    // FLOPs per ns is GFLOP/s.
    row.gflops =
        row.time_ns > 0 ? spec_.tmpl->Flops(spec_.workload) / row.time_ns : 0;
  }
  return row;
}

void Job::OnStored(const StoredResult& result) {
  if (!result.fresh) return;  // a repeated result counts once
  {
    absl::MutexLock lock(&mu_);
    inbox_.push_back(Result{
        result.trial_id, result.error,
        result.error == Measurement::OK ? result.time_ns : 0.0,
        result.kernel_work_group_limit});
  }
  Wake();
}

bool Job::Step() {
  if (!set_up_) {
    set_up_ = true;
    bool cancelled;
    {
      absl::MutexLock lock(&mu_);
      cancelled = cancelled_;
    }
    // Cancelled or interrupted before it ever ran: nothing to set up
    // (End() takes the lock itself).
    if (cancelled) return End(absl::OkStatus());
    if (absl::Status s = SetUp(); !s.ok()) return End(s);
  }
  bool ended = false;
  absl::Status status = Advance(&ended);
  if (!status.ok() || ended) return End(status);
  return false;
}

bool Job::End(const absl::Status& status) {
  bool cancelled, interrupted;
  {
    absl::MutexLock lock(&mu_);
    cancelled = cancelled_;
    interrupted = interrupted_;
  }
  scheduler_->CancelJob(id_);
  // Most of the job's memory: the strategy (its model and the features of
  // every config), then the space it reads.
  strategy_.reset();
  space_.reset();
  requests_.reset();
  if (interrupted) return true;  // left unfinished for the next server
  const tunefleet::v1::JobState state =
      !status.ok() ? tunefleet::v1::JOB_STATE_FAILED
      : cancelled  ? tunefleet::v1::JOB_STATE_CANCELLED
                   : tunefleet::v1::JOB_STATE_DONE;
  Finish(state, std::string(status.message()),
         [this, state](const std::string& message) {
           absl::Status stored = store_->SetJobState(id_, state, message);
           // Ended, the job takes no result any more (its unmeasured trials
           // are CANCELLED now): it counts what the store holds, as `jobs
           // --db`, `report` and a restarted server will, a result stored
           // after its last count included.
           if (absl::StatusOr<store::JobTally> tally = store_->TallyJob(id_);
               stored.ok() && tally.ok()) {
             absl::MutexLock lock(&mu_);
             progress_.set_trials_done(static_cast<uint32_t>(tally->done));
             progress_.clear_errors();
             for (const auto& [code, n] : tally->errors) {
               (*progress_.mutable_errors())[code] = n;
             }
             if (tally->best) *progress_.mutable_best() = *tally->best;
           }
           return stored;
         });
  return true;
}

const trial::MeasureRequestBuilder& Job::Requests() {
  if (requests_ == nullptr) {
    requests_ = std::make_unique<const trial::MeasureRequestBuilder>(
        *spec_.tmpl, spec_.workload, spec_.timing);
  }
  return *requests_;
}

absl::StatusOr<std::unique_ptr<search::GuidedStrategy>> Job::MakeStrategy() {
  search::StrategyOptions options;
  options.seed = spec_.seed;
  options.xgb.seed = spec_.seed;
  options.budget_hint = static_cast<size_t>(
      spec_.budget_hint > 0 ? spec_.budget_hint : spec_.budget);
  // The history's one copy moves into the strategy (it is large: up to
  // kMaxHistoryRows rows of features).
  options.history = std::move(spec_.history);
  TUNEFLEET_ASSIGN_OR_RETURN(
      options.features,
      search_space::SpaceFeatures(
          *space_,
          search_space::TaskFeatures(*spec_.tmpl, spec_.workload,
                                     trial::LimitsFromDeviceInfo(device_))));
  // A resumed job's stored trials are never proposed again.
  std::vector<uint64_t> proposed;
  proposed.reserve(resume_.trials.size());
  for (const store::Trial& t : resume_.trials) {
    proposed.push_back(t.config_index);
  }
  auto strategy = std::make_unique<search::GuidedStrategy>(
      search::MakeStrategy(spec_.strategy, *space_, std::move(options)),
      proposed);
  if (!resume_.trials.empty()) Replay(strategy.get());
  return strategy;
}

void Job::Suggest(const tunefleet::v1::Config& config) {
  absl::MutexLock lock(&mu_);
  suggested_.push_back(config);
  Wake();
}

std::optional<uint64_t> Job::IndexOf(
    const tunefleet::v1::Config& config) const {
  const std::vector<search_space::KnobSpec>& knobs = space_->knobs();
  if (static_cast<size_t>(config.knobs_size()) != knobs.size()) {
    return std::nullopt;
  }
  std::vector<uint32_t> digits;
  digits.reserve(knobs.size());
  for (const search_space::KnobSpec& k : knobs) {
    auto given = std::find_if(
        config.knobs().begin(), config.knobs().end(),
        [&k](const tunefleet::v1::KnobValue& v) { return v.name() == k.name; });
    if (given == config.knobs().end()) return std::nullopt;
    auto at = std::find(k.values.begin(), k.values.end(), given->value());
    if (at == k.values.end()) return std::nullopt;
    digits.push_back(static_cast<uint32_t>(at - k.values.begin()));
  }
  const uint64_t index = space_->IndexOf(digits);
  if (!space_->IsValid(index)) return std::nullopt;
  return index;
}

void Job::EnqueueReference() {
  auto request = std::make_shared<tunefleet::v1::MeasureRequest>(
      trial::BuildReferenceRequest(*spec_.tmpl, spec_.workload,
                                   reference_trial_id(), spec_.timing));
  QueuedTrial reference{reference_trial_id(), id_, spec_.priority + 1,
                        spec_.device_key, std::move(request)};
  reference.driver_version = spec_.driver_version;
  scheduler_->Enqueue({std::move(reference)});
}

absl::Status Job::SetUp() {
  TUNEFLEET_RETURN_IF_ERROR(
      store_->SetJobState(id_, tunefleet::v1::JOB_STATE_RUNNING, ""));
  TUNEFLEET_ASSIGN_OR_RETURN(strategy_, MakeStrategy());
  {
    absl::MutexLock lock(&mu_);
    progress_.set_state(tunefleet::v1::JOB_STATE_RUNNING);
    Changed();
  }
  // First in line: the baseline the tuned kernels are compared with.
  if (spec_.measure_reference && !resume_.reference_measured) {
    EnqueueReference();
  }
  return absl::OkStatus();
}

absl::Status Job::Advance(bool* ended) {
  // While it waits for room on the fleet (agents that connect later get
  // work), or has a deadline, a timer wakes it too; everything else it
  // waits for (results, grants, a cancel) wakes it.
  constexpr absl::Duration kRecheck = absl::Milliseconds(200);
  *ended = true;
  std::vector<search::Observation> measurements;
  size_t outstanding = 0;
  if (!Collect(&measurements, &outstanding)) return absl::OkStatus();
  strategy_->Observe(measurements);
  const int64_t done = Done();
  bool open = false;
  const int64_t budget = Budget(&open);
  if (done >= budget && !open) {
    if (spec_.granted_budget) SetMessage("its granted trials are measured");
    return absl::OkStatus();
  }
  if (StoppedEarly(done) || PastDeadline()) return absl::OkStatus();
  if (exhausted_ && outstanding == 0) {
    if (spec_.granted_budget && skipped_in_a_row_ < kMaxSkippedInARow) {
      SetMessage("every config of its space measured");
    }
    return absl::OkStatus();
  }
  *ended = false;
  const int64_t in_flight = static_cast<int64_t>(outstanding);
  const int64_t left = budget - done - in_flight;
  if (spec_.deadline_ms > 0) WakeAfter(kRecheck);
  if (left <= 0 || exhausted_) return absl::OkStatus();
  const int64_t capacity = scheduler_->Capacity(spec_.device_key);
  const int64_t want = std::min(left, capacity - in_flight);
  if (want <= 0) {
    WakeAfter(kRecheck);  // no room on the fleet now
    return absl::OkStatus();
  }
  std::vector<tunefleet::v1::Config> suggested;
  {
    absl::MutexLock lock(&mu_);
    suggested.swap(suggested_);
  }
  for (const tunefleet::v1::Config& config : suggested) {
    if (std::optional<uint64_t> index = IndexOf(config)) {
      strategy_->Suggest(*index);
    }
  }
  std::vector<uint64_t> indices =
      spec_.configs.empty() ? strategy_->Propose(static_cast<size_t>(want))
                            : ProposeListed(static_cast<size_t>(want));
  if (indices.empty()) {
    exhausted_ = true;  // every valid config has been proposed
    Wake();             // which may end it now
    return absl::OkStatus();
  }
  if (spec_.configs.empty()) {
    const size_t proposed = indices.size();
    indices = WithinWorkGroupLimit(std::move(indices));
    skipped_in_a_row_ = indices.empty() ? skipped_in_a_row_ + proposed : 0;
    if (skipped_in_a_row_ >= kMaxSkippedInARow) {
      // A space (too large to run out) whose proposals all stay above the
      // limit: end it as if its space were measured.
      exhausted_ = true;
      SetMessage(absl::StrCat("the last ", skipped_in_a_row_,
                              " configs proposed were all above the "
                              "kernels' work-group limit of ",
                              work_group_limit_.limit()));
    }
    // All skipped: the next step proposes others (or ends it).
    if (indices.empty()) Wake();
  }
  return Dispatch(indices);
}

uint64_t Job::GroupSize(uint64_t index) const {
  uint64_t group = 1;
  for (uint64_t l :
       spec_.tmpl->Launch(space_->Config(index), spec_.workload).local) {
    group *= l;
  }
  return group;
}

std::vector<uint64_t> Job::WithinWorkGroupLimit(std::vector<uint64_t> indices) {
  if (work_group_limit_.limit() == 0) return indices;
  std::vector<uint64_t> kept;
  std::vector<search::Observation> skipped;
  for (uint64_t index : indices) {
    if (work_group_limit_.Over(GroupSize(index))) {
      skipped.push_back({index, /*ok=*/false, 0.0});
    } else {
      kept.push_back(index);
    }
  }
  if (!skipped.empty()) {
    strategy_->Observe(skipped);
    absl::MutexLock lock(&mu_);
    progress_.set_configs_over_work_group_limit(
        progress_.configs_over_work_group_limit() +
        static_cast<uint32_t>(skipped.size()));
    Changed();
  }
  return kept;
}

std::vector<uint64_t> Job::ProposeListed(size_t n) {
  std::vector<uint64_t> out;
  while (out.size() < n && next_config_ < spec_.configs.size()) {
    const uint64_t index = spec_.configs[next_config_++];
    const bool stored = std::any_of(
        resume_.trials.begin(), resume_.trials.end(),
        [index](const store::Trial& t) { return t.config_index == index; });
    if (!stored) out.push_back(index);
  }
  return out;
}

int64_t Job::Done() {
  absl::MutexLock lock(&mu_);
  return progress_.trials_done();
}

bool Job::StoppedEarly(int64_t done) {
  if (spec_.early_stop <= 0) return false;
  absl::MutexLock lock(&mu_);
  if (done - improved_at_ < spec_.early_stop) return false;
  progress_.set_message(absl::StrCat("stopped early: no improvement in the ",
                                     spec_.early_stop, " trials after trial ",
                                     improved_at_));
  return true;
}

bool Job::PastDeadline() {
  if (spec_.deadline_ms <= 0 || clock_.NowMs() < spec_.deadline_ms) {
    return false;
  }
  absl::MutexLock lock(&mu_);
  progress_.set_message(absl::StrCat("deadline reached after ",
                                     progress_.trials_done(), " trials"));
  return true;
}

void Job::Replay(search::SearchStrategy* strategy) {
  std::vector<search::Observation> measurements;
  std::vector<QueuedTrial> queued;
  {
    absl::MutexLock lock(&mu_);
    for (const store::Trial& t : resume_.trials) {
      if (t.state != tunefleet::v1::TRIAL_STATE_DONE) {
        outstanding_[t.id] = t.config_index;
        trial::LeanRequest lean =
            Requests().BuildLean(space_->Config(t.config_index), t.id);
        queued.push_back(
            QueuedTrial{t.id, id_, spec_.priority, spec_.device_key,
                        std::make_shared<tunefleet::v1::MeasureRequest>(
                            std::move(lean.request)),
                        t.attempt, std::move(lean.sources)});
        queued.back().driver_version = spec_.driver_version;
        continue;
      }
      if (t.error == Measurement::CANCELLED) continue;
      const bool ok = t.error == Measurement::OK;
      measurements.push_back(
          Count(t.id, t.config_index, t.error, ok ? t.time_ns : 0.0));
    }
    Changed();
  }
  strategy->Observe(measurements);
  scheduler_->Enqueue(std::move(queued));
}

bool Job::Collect(std::vector<search::Observation>* measurements,
                  size_t* outstanding) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  std::vector<Result> results;
  results.swap(inbox_);
  for (const Result& r : results) {
    auto it = outstanding_.find(r.trial_id);
    if (it == outstanding_.end()) continue;
    measurements->push_back(Count(r.trial_id, it->second, r.error, r.time_ns));
    const bool refused = r.error == Measurement::INVALID_CONFIG &&
                         r.kernel_work_group_limit > 0;
    work_group_limit_.Observe(r.kernel_work_group_limit,
                              refused ? GroupSize(it->second) : 0);
    outstanding_.erase(it);
  }
  progress_.set_work_group_limit(work_group_limit_.limit());
  if (!results.empty()) Changed();
  *outstanding = outstanding_.size();
  return true;
}

search::Observation Job::Count(int64_t trial_id, uint64_t index,
                               Measurement::Error error, double time_ns) {
  const bool ok = error == Measurement::OK;
  (*progress_.mutable_errors())[Measurement::Error_Name(error)]++;
  progress_.set_trials_done(progress_.trials_done() + 1);
  if (ok && (!progress_.has_best() || time_ns < progress_.best().time_ns())) {
    SetBest(trial_id, index, time_ns);
    improved_at_ = progress_.trials_done();
  }
  return {index, ok, time_ns};
}

void Job::SetBest(int64_t trial_id, uint64_t index, double time_ns) {
  tunefleet::v1::TuningRecord* best = progress_.mutable_best();
  best->set_trial_id(trial_id);
  best->set_job_id(id_);
  best->set_device_key(spec_.device_key);
  *best->mutable_workload() = trial::WorkloadToProto(spec_.workload);
  best->set_workload_key(spec_.workload.Canonical());
  best->set_template_name(std::string(spec_.tmpl->name()));
  best->set_template_version(spec_.tmpl->version());
  *best->mutable_config() =
      trial::ConfigToProto(*spec_.tmpl, space_->Config(index));
  best->set_error(Measurement::OK);
  best->set_time_ns(time_ns);
  best->set_gflops(spec_.tmpl->Flops(spec_.workload) / time_ns);
}

absl::Status Job::Dispatch(const std::vector<uint64_t>& indices) {
  for (size_t from = 0; from < indices.size(); from += kDispatchChunk) {
    const size_t to = std::min(indices.size(), from + kDispatchChunk);
    std::vector<store::NewTrial> rows;
    rows.reserve(to - from);
    for (size_t t = from; t < to; ++t) {
      rows.push_back({indices[t], space_->ConfigString(indices[t])});
    }
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                               store_->InsertTrials(id_, rows));
    // Built outside the job's lock: results (OnStored) need it meanwhile.
    std::vector<QueuedTrial> queued;
    queued.reserve(ids.size());
    for (size_t t = 0; t < ids.size(); ++t) {
      // The sources stay in the builder's shared texts (LeanRequest): the
      // agent's session fills them in only where the agent lacks them.
      trial::LeanRequest lean =
          Requests().BuildLean(space_->Config(rows[t].config_index), ids[t]);
      queued.push_back(
          QueuedTrial{ids[t], id_, spec_.priority, spec_.device_key,
                      std::make_shared<tunefleet::v1::MeasureRequest>(
                          std::move(lean.request)),
                      0, std::move(lean.sources)});
      queued.back().driver_version = spec_.driver_version;
    }
    {
      absl::MutexLock lock(&mu_);
      for (size_t t = 0; t < ids.size(); ++t) {
        outstanding_[ids[t]] = rows[t].config_index;
      }
    }
    scheduler_->Enqueue(std::move(queued));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::server
