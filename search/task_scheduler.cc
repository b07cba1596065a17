#include "search/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet::search {
namespace {

// The smaller of two times where 0 means unknown.
double MinKnown(double a, double b) {
  if (a <= 0) return b > 0 ? b : 0;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

TaskScheduler::TaskScheduler(std::vector<SchedulerTask> tasks,
                             TaskSchedulerOptions options)
    : tasks_(std::move(tasks)),
      options_(options),
      rng_(options.seed),
      state_(tasks_.size()) {
  if (options_.batch > 0) {
    batch_ = options_.batch;
  } else {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(size()));
    batch_ = std::clamp<int64_t>(options_.budget / (4 * n), 1, 8);
  }
  std::map<std::string, size_t> workload_index;
  std::map<std::string, size_t> tag_index;
  workload_of_.resize(size());
  tag_of_.resize(size());
  for (size_t i = 0; i < size(); ++i) {
    auto [w, new_workload] =
        workload_index.emplace(tasks_[i].workload, workloads_.size());
    if (new_workload) workloads_.emplace_back();
    workloads_[w->second].push_back(i);
    workload_of_[i] = w->second;
    auto [t, new_tag] = tag_index.emplace(tasks_[i].similarity_tag, tags_);
    if (new_tag) ++tags_;
    tag_of_[i] = t->second;
  }
}

void TaskScheduler::RestoreGranted(size_t task, int64_t granted) {
  if (task >= size() || granted < 0) return;
  TaskState& st = state_[task];
  st.granted = granted;
  st.grants = (granted + batch_ - 1) / batch_;
  st.round_mark = 0;
}

void TaskScheduler::Update(size_t task, const TaskResults& results) {
  if (task >= size()) return;
  TaskState& st = state_[task];
  st.results = results;
  if (results.done >= st.granted && st.granted > st.round_mark) {
    EndRound(task);
  }
  if (results.ended && Live(task)) {
    st.stopped_reason =
        results.ended_reason.empty() ? "job ended" : results.ended_reason;
  }
}

void TaskScheduler::EndRound(size_t i) {
  TaskState& st = state_[i];
  st.history.push_back(OwnTimeNs(i));
  st.round_trials.push_back(st.granted - st.round_mark);
  st.round_mark = st.granted;
  ++st.rounds;
  const double best = st.results.best_ns;
  if (st.rounds == 1) {  // the first round sets the baseline
    st.last_best_ns = best;
    return;
  }
  if (best > 0 && (st.last_best_ns <= 0 || best < st.last_best_ns)) {
    st.last_best_ns = best;
    st.stall = 0;
    return;
  }
  ++st.stall;
  if (options_.rule == TaskSchedulerOptions::Rule::kGradient &&
      options_.stall_rounds > 0 && Live(i) && st.stall >= Patience(i)) {
    st.stopped_reason = absl::StrCat("no improvement in ", st.stall, " rounds");
  }
}

int TaskScheduler::Patience(size_t i) const {
  // k = the task's term over the mean term of the workloads with a figure.
  double sum = 0;
  int known = 0;
  for (const auto& tasks : workloads_) {
    const double t = TermTimeNs(tasks.front());
    if (t > 0) {
      sum += WorkloadWeight(tasks.front()) * t;
      ++known;
    }
  }
  const double term = WorkloadWeight(i) * TermTimeNs(i);
  const double k = sum > 0 && term > 0 ? term * known / sum : 1;
  return static_cast<int>(
      std::ceil(options_.stall_rounds * std::max(1.0, k) - 1e-9));
}

bool TaskScheduler::Idle(size_t i) const {
  return state_[i].results.done >= state_[i].granted;
}

int64_t TaskScheduler::NetGranted(size_t i) const {
  const TaskState& st = state_[i];
  if (st.results.ended) {
    return std::clamp<int64_t>(st.results.done, 0, st.granted);
  }
  return st.granted;
}

int64_t TaskScheduler::granted() const {
  int64_t sum = 0;
  for (size_t i = 0; i < size(); ++i) sum += NetGranted(i);
  return sum;
}

int64_t TaskScheduler::granted(size_t task) const {
  return task < size() ? NetGranted(task) : 0;
}

int64_t TaskScheduler::Remaining() const { return options_.budget - granted(); }

double TaskScheduler::FastestOwnNs(size_t i) const {
  return MinKnown(state_[i].results.best_ns, state_[i].results.reference_ns);
}

double TaskScheduler::TermTimeNs(size_t i) const {
  double t = 0;
  for (size_t j : workloads_[workload_of_[i]]) t = MinKnown(t, FastestOwnNs(j));
  return t;
}

double TaskScheduler::WorkloadWeight(size_t i) const {
  double w = 0;
  for (size_t j : workloads_[workload_of_[i]]) {
    w = std::max(w, tasks_[j].weight);
  }
  return w;
}

double TaskScheduler::OwnTimeNs(size_t i) const {
  const double best = state_[i].results.best_ns;
  return best > 0 ? best : TermTimeNs(i);
}

double TaskScheduler::LatencyNs(bool* complete) const {
  double sum = 0;
  bool all = true;
  for (const auto& tasks : workloads_) {
    const double t = TermTimeNs(tasks.front());
    if (t > 0) {
      sum += WorkloadWeight(tasks.front()) * t;
    } else {
      all = false;
    }
  }
  if (complete != nullptr) *complete = all;
  return sum;
}

double TaskScheduler::NaiveLatencyNs() const {
  double sum = 0;
  for (const auto& tasks : workloads_) {
    double t = 0;
    for (size_t j : tasks) t = MinKnown(t, state_[j].results.reference_ns);
    if (t > 0) sum += WorkloadWeight(tasks.front()) * t;
  }
  return sum;
}

std::string TaskScheduler::StoppedReason(size_t task) const {
  return task < size() ? state_[task].stopped_reason : std::string();
}

bool TaskScheduler::Finished() const {
  if (Remaining() <= 0) return true;
  for (size_t i = 0; i < size(); ++i) {
    if (Live(i)) return false;
  }
  return true;
}

bool TaskScheduler::Heavier(size_t a, size_t b) const {
  // Tier 0: a time figure (weight_w x T_w, ns); tier 1: flops only
  // (weight x flops); tier 2: the weight alone.
  auto key = [this](size_t i) -> std::pair<int, double> {
    const double t = TermTimeNs(i);
    if (t > 0) return {0, WorkloadWeight(i) * t};
    if (tasks_[i].flops > 0) return {1, tasks_[i].weight * tasks_[i].flops};
    return {2, tasks_[i].weight};
  };
  const auto ka = key(a);
  const auto kb = key(b);
  if (ka.first != kb.first) return ka.first < kb.first;
  if (ka.second != kb.second) return ka.second > kb.second;
  return a < b;
}

double TaskScheduler::Gain(size_t i, double throughput) const {
  const TaskState& st = state_[i];
  const double h = OwnTimeNs(i);
  const double b = static_cast<double>(batch_);
  const double r = static_cast<double>(std::max<int64_t>(1, st.grants));
  double bound = std::numeric_limits<double>::infinity();
  if (throughput > 0 && tasks_[i].flops > 0) {
    bound = options_.beta * tasks_[i].flops / throughput;
  }
  const double next = std::max(0.0, std::min(h - h / r, bound));
  const double forward = (h - next) / b;
  double backward = 0;
  const size_t k = st.history.size();
  const size_t w = options_.window > 0 ? options_.window : 0;
  if (w > 0 && k > w) {
    const double start = st.history[k - 1 - w];
    const double end = st.history[k - 1];
    int64_t trials = 0;
    for (size_t j = k - w; j < k; ++j) trials += st.round_trials[j];
    if (start > 0 && end > 0 && trials > 0) {
      backward = std::max(0.0, start - end) / static_cast<double>(trials);
    }
  }
  const double fall =
      options_.alpha * backward + (1 - options_.alpha) * forward;
  const double gap = h - TermTimeNs(i);
  return WorkloadWeight(i) * std::max(0.0, b * fall - gap) / b;
}

std::optional<size_t> TaskScheduler::PickRoundRobin(
    const std::vector<size_t>& candidates) const {
  std::optional<size_t> pick;
  for (size_t i : candidates) {
    if (!pick || state_[i].granted < state_[*pick].granted) pick = i;
  }
  return pick;
}

std::optional<size_t> TaskScheduler::PickGradient(
    const std::vector<size_t>& candidates) {
  auto heaviest = [this](const std::vector<size_t>& among) {
    size_t best = among.front();
    for (size_t i : among) {
      if (Heavier(i, best)) best = i;
    }
    return best;
  };
  // Warm-up: a live task without a grant comes first (they are idle).
  std::vector<size_t> cold;
  for (size_t i = 0; i < size(); ++i) {
    if (Live(i) && state_[i].grants == 0) cold.push_back(i);
  }
  if (!cold.empty()) return heaviest(cold);

  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  if (u < options_.epsilon) {
    return candidates[rng_() % candidates.size()];
  }
  std::vector<size_t> unmeasured;
  for (size_t i : candidates) {
    if (OwnTimeNs(i) <= 0) unmeasured.push_back(i);
  }
  if (!unmeasured.empty()) return heaviest(unmeasured);

  // V per similarity tag and over all tasks (flops per ns).
  std::vector<double> tag_v(tags_, 0);
  double all_v = 0;
  for (size_t j = 0; j < size(); ++j) {
    const double t = FastestOwnNs(j);
    if (t <= 0 || tasks_[j].flops <= 0) continue;
    const double v = tasks_[j].flops / t;
    tag_v[tag_of_[j]] = std::max(tag_v[tag_of_[j]], v);
    all_v = std::max(all_v, v);
  }
  std::optional<size_t> pick;
  double best_gain = 0;
  for (size_t i : candidates) {
    const double v = tag_v[tag_of_[i]] > 0 ? tag_v[tag_of_[i]] : all_v;
    const double gain = Gain(i, v);
    if (std::isfinite(gain) && gain > best_gain) {
      best_gain = gain;
      pick = i;
    }
  }
  if (!pick) return heaviest(candidates);
  return pick;
}

std::optional<Grant> TaskScheduler::Next(bool busy_ok) {
  const int64_t remaining = Remaining();
  if (remaining <= 0) return std::nullopt;
  std::vector<size_t> candidates;
  for (size_t i = 0; i < size(); ++i) {
    if (Live(i) && (busy_ok || Idle(i))) candidates.push_back(i);
  }
  if (candidates.empty()) return std::nullopt;
  const std::optional<size_t> pick =
      options_.rule == TaskSchedulerOptions::Rule::kRoundRobin
          ? PickRoundRobin(candidates)
          : PickGradient(candidates);
  if (!pick) return std::nullopt;
  const bool warmup = options_.rule == TaskSchedulerOptions::Rule::kGradient &&
                      state_[*pick].grants == 0 && options_.warmup_trials > 0;
  Grant grant{*pick,
              std::min(warmup ? options_.warmup_trials : batch_, remaining)};
  TaskState& st = state_[*pick];
  st.granted += grant.trials;
  ++st.grants;
  return grant;
}

}  // namespace tunefleet::search
