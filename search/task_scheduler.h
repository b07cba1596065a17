// The task scheduler of a model job: spreads one trial budget over a
// model's tasks, a batch of trials at a time, so that the trials go where
// the model's estimated latency falls fastest.
//
//   model job (server/model_job.h)            TaskScheduler
//   ------------------------------            -------------
//   task results (done, best, naive) --Update()-->  per-task state, rounds
//   an idle task, budget left        <--Next()----  {task, trials}
//   Grant(task, trials) to the task's job ...
//
// Estimated latency (ns) of the model: over its workloads (tasks of one
// workload -- a generated and a library template -- share one term),
//   L = sum_w weight_w x T_w,  T_w = min(best_ns, reference_ns of w's tasks,
//                                        over the known (> 0) ones)
// weight_w = the largest weight of w's tasks (they should agree); a
// workload with no figure is left out (`complete` false). The naive
// latency is the same sum with reference times only.
//
// A round of a task is what it was granted since its previous round ended;
// it ends when the task's done count reaches its granted count (Update()).
// Each finished round appends the task's own time h_i (below) to its
// history and counts for the stall rule.
//
// Two rules (proto TaskScheduler):
// - kRoundRobin: the live task with the fewest trials granted gets the
//   next batch, the first in task order on ties: one batch each, in task
//   order, again and again until the budget is spent (uniform allocation;
//   the stall rule does not apply).
// - kGradient: Ansor's (Zheng et al., "Ansor: Generating High-Performance
//   Tensor Programs for Deep Learning", OSDI 2020, sec. 6.2; and TVM's
//   auto_scheduler/task_scheduler.py). Warm-up: every task gets one round
//   of `warmup_trials` (one trial by default: a model has tens of tasks and
//   most of its latency sits in a few) before any task gets a second, heaviest
//   first (weight_w x T_w for tasks with a figure, e.g. a reference, then
//   weight x flops for the others, then the rest; task order on ties). Then
//   each batch goes to the idle live task (any live task with busy_ok) with the
//   largest gain_i, the expected fall of the model's latency (ns) per trial
//   (task order on ties):
//     h_i      = the task's own time: its best_ns, or T_w of its workload
//                w (e.g. the reference) while it has no best
//     r_i      = grants the task has had (>= 1)
//     b        = batch()
//     V_i      = max flops_j / t_j over the tasks j with the same
//                similarity_tag as i (i included), t_j = the fastest of
//                j's best_ns and reference_ns, flops_j > 0, t_j > 0; over
//                all tasks when none of i's tag has one; none: no bound
//     bound_i  = beta x flops_i / V_i (the time at 1/beta of the best
//                throughput of similar tasks; +inf without V_i or flops_i)
//     forward_i  = (h_i - max(0, min(h_i - h_i / r_i, bound_i))) / b
//     backward_i = max(0, H_i[k - window] - H_i[k]) / (trials granted in
//                  rounds k - window + 1 .. k), H_i = the history, k its
//                  last round; 0 while k < window or an end is unknown
//     fall_i   = alpha x backward_i + (1 - alpha) x forward_i  (ns/trial
//                of the task's own time)
//     gain_i   = weight_w x max(0, b x fall_i - (h_i - T_w)) / b
//   The last factor only matters for a task that is not the fastest of its
//   workload (h_i > T_w): its trials lower the model's latency only once
//   it passes the workload's fastest. So a task near the throughput of its
//   similar tasks gains about h_i / r_i per batch (falling with each
//   round), one far from it up to h_i - bound_i, and each is weighed by
//   its share of the model's latency. A task with no figure at all (no
//   best, no reference) comes before any gain (heaviest first) so that it
//   gets measured; when no gain is positive, the heaviest (weight x T_w)
//   task gets the batch. After the warm-up, with probability epsilon a
//   random candidate instead (std::mt19937_64 seeded with `seed`: the
//   same calls give the same grants; its state is not restored after a
//   restart).
// A task stops (no more grants) when its job ended (space exhausted,
// failed, cancelled: stopped_reason = the job's reason, or "job ended"
// when it gives none) or, with kGradient and stall_rounds > 0, when its
// finished rounds after its first one have not lowered its best_ns for
//     patience_i = ceil(stall_rounds x max(1, weight_w x T_w / mean term))
// rounds in a row (mean term: L over the workloads with a figure;
// stopped_reason "no improvement in N rounds"). The first finished round
// (the warm-up, or the first after RestoreGranted) sets the baseline. A
// task with k times the mean share of the latency waits k times longer:
// under random sampling a run of a few fruitless batches is common early
// on, and stopping a heavy task far from its optimum costs the most.
// The model converges when every task has stopped.
// The sum of grants never exceeds the budget; the last grant is what is
// left when that is less than a batch. What an ended task was granted and
// did not measure returns to the budget.
//
// Not thread-safe: the model job's thread drives it.
#ifndef TUNEFLEET_SEARCH_TASK_SCHEDULER_H_
#define TUNEFLEET_SEARCH_TASK_SCHEDULER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tunefleet::search {

// What the scheduler knows about a task before any trial.
struct SchedulerTask {
  std::string workload;        // canonical workload: tasks sharing it share
                               // one latency term
  std::string similarity_tag;  // tasks alike (e.g. the op), for the bound
  double weight = 1;           // occurrences in the model
  double flops = 0;            // per run of the task's kernel; 0: unknown
};

// A task's results so far, as its job reports them.
struct TaskResults {
  int64_t done = 0;          // trials with a stored measurement
  double best_ns = 0;        // fastest OK trial, ns; 0: none yet
  double reference_ns = 0;   // naive reference kernel, ns; 0: unmeasured
  bool ended = false;        // the task's job ended: no more trials
  std::string ended_reason;  // why, for stopped_reason
};

struct TaskSchedulerOptions {
  enum class Rule { kGradient, kRoundRobin };
  Rule rule = Rule::kGradient;
  int64_t budget = 0;  // trials over all tasks, > 0
  // Trials per grant; 0: clamp(budget / (4 x tasks), 1, 8).
  int64_t batch = 0;
  double alpha = 0.2;     // weight of the backward (measured) gradient
  double beta = 2;        // optimism of the throughput bound
  int window = 3;         // rounds of the backward gradient
  double epsilon = 0.05;  // chance of a random live task
  int stall_rounds = 4;   // rounds without improvement before a task
                          // of the mean share of the latency stops
                          // (kGradient; see the top); <= 0: never
  // Trials of a task's warm-up round under kGradient; later rounds, and
  // every round of kRoundRobin, have `batch`. 0: `batch`.
  int64_t warmup_trials = 1;
  uint64_t seed = 0;
};

// One decision: give `trials` more trials to task `task`.
struct Grant {
  size_t task = 0;
  int64_t trials = 0;
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<SchedulerTask> tasks, TaskSchedulerOptions options);

  // Restores a task's grants after a server restart (before any Next()):
  // `granted` trials were granted to it earlier, whether measured or not.
  // A task with grants has had its warm-up; its rounds count is taken as
  // ceil(granted / batch) and its history starts empty.
  void RestoreGranted(size_t task, int64_t granted);

  // The task's latest results. A round of the task ends when its done
  // count reaches what it was granted; its own time then enters the
  // task's history (for the backward gradient and the stall rule). An
  // ended task stops; its unmeasured grant returns to the budget.
  void Update(size_t task, const TaskResults& results);

  // The next grant, or nullopt when none should be made now: the budget
  // is spent (net of ended tasks' unmeasured grants), every task has
  // stopped, or every live task is busy (done < granted). `busy_ok`: also
  // consider live tasks that are still measuring an earlier grant (to keep
  // more agents busy than there are idle tasks). Records the grant.
  std::optional<Grant> Next(bool busy_ok = false);

  // Trials granted so far over all tasks, net of ended tasks' unmeasured
  // grants; never above the budget.
  int64_t granted() const;
  // The same for one task: for an ended task, what it measured (at most
  // what it was granted).
  int64_t granted(size_t task) const;
  int64_t budget() const { return options_.budget; }
  int64_t batch() const { return batch_; }
  // Estimated model latency, ns, and the same with naive times only (see
  // the top of this file); `complete` false when a workload has no figure.
  double LatencyNs(bool* complete = nullptr) const;
  double NaiveLatencyNs() const;
  // Why task `task` gets no more trials; empty while it is live.
  std::string StoppedReason(size_t task) const;
  // True when no task can get more trials: budget spent or all stopped.
  bool Finished() const;
  size_t size() const { return tasks_.size(); }

 private:
  struct TaskState {
    TaskResults results;
    int64_t granted = 0;     // gross: every trial granted, measured or not
    int64_t grants = 0;      // r_i: grants so far (or estimated on restore)
    int64_t round_mark = 0;  // granted when the last round ended
    std::vector<double> history;        // h_i after each finished round; 0:
                                        // unknown
    std::vector<int64_t> round_trials;  // trials granted in each round
    int64_t rounds = 0;                 // finished rounds since start/restore
    double last_best_ns = 0;            // best_ns at the last round's end
    int stall = 0;                      // finished rounds without improvement
    std::string stopped_reason;         // non-empty: stopped
  };

  bool Live(size_t i) const { return state_[i].stopped_reason.empty(); }
  bool Idle(size_t i) const;
  int64_t NetGranted(size_t i) const;
  int64_t Remaining() const;
  // T_w of task i's workload: the fastest known time, 0 when none.
  double TermTimeNs(size_t i) const;
  double WorkloadWeight(size_t i) const;
  // The task's own time h_i; 0 when unknown.
  double OwnTimeNs(size_t i) const;
  // The fastest of the task's own best and reference times; 0: none.
  double FastestOwnNs(size_t i) const;
  // gain_i (see the top of this file), given V_i (0: none).
  double Gain(size_t i, double throughput) const;
  // Warm-up / heaviness order: true when task a ranks before task b.
  bool Heavier(size_t a, size_t b) const;
  void EndRound(size_t i);
  // Rounds without improvement after which task i stops (kGradient).
  int Patience(size_t i) const;
  std::optional<size_t> PickRoundRobin(
      const std::vector<size_t>& candidates) const;
  std::optional<size_t> PickGradient(const std::vector<size_t>& candidates);

  std::vector<SchedulerTask> tasks_;
  TaskSchedulerOptions options_;
  int64_t batch_ = 1;
  std::mt19937_64 rng_;
  std::vector<size_t> workload_of_;             // task -> index into workloads_
  std::vector<std::vector<size_t>> workloads_;  // tasks of each workload
  std::vector<size_t> tag_of_;  // task -> index of its similarity tag
  size_t tags_ = 0;
  std::vector<TaskState> state_;
};

}  // namespace tunefleet::search

#endif  // TUNEFLEET_SEARCH_TASK_SCHEDULER_H_
