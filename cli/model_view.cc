#include "cli/model_view.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "contract/names.h"

namespace tunefleet::cli {

using tunefleet::v1::JobProgress;
using tunefleet::v1::ModelProgress;
using tunefleet::v1::ModelTaskProgress;

std::string MsText(double ns) {
  const double ms = ns / 1e6;
  if (ms >= 100) return absl::StrFormat("%.0f", ms);
  if (ms >= 10) return absl::StrFormat("%.1f", ms);
  if (ms >= 1) return absl::StrFormat("%.2f", ms);
  return absl::StrFormat("%.3g", ms);
}

namespace {

// "8.49 -> 5.10 ms (1.7x)", "-" before any figure.
std::string LatencyChange(const ModelProgress& m) {
  if (m.latency_ns() <= 0) return "-";
  std::string text;
  if (m.naive_latency_ns() > 0) {
    absl::StrAppend(&text, MsText(m.naive_latency_ns()), " -> ");
  }
  absl::StrAppend(&text, MsText(m.latency_ns()), " ms");
  if (m.naive_latency_ns() > 0) {
    absl::StrAppendFormat(&text, " (%.1fx)",
                          m.naive_latency_ns() / m.latency_ns());
  }
  if (!m.latency_complete()) absl::StrAppend(&text, " (partial)");
  return text;
}

}  // namespace

std::string ModelProgressLine(const JobProgress& p) {
  const ModelProgress& m = p.model();
  return absl::StrFormat("trials %u/%u  est. latency %s  tasks stopped %u/%u",
                         p.trials_done(), p.trials_total(), LatencyChange(m),
                         m.tasks_stopped(), m.tasks());
}

std::string ModelLatencyText(const ModelProgress& m) {
  const double naive = m.naive_latency_ns() / 1e6;
  const double tuned = m.latency_ns() / 1e6;
  return absl::StrFormat(
      "estimated latency (sum of kernel time x count): naive %.3f ms, tuned "
      "%.3f ms (%.1fx)%s",
      naive, tuned, tuned > 0 ? naive / tuned : 0.0,
      m.latency_complete() ? "" : " (some tasks have no figure)");
}

std::string MeasuredLatencyText(const ModelProgress& m) {
  if (!m.has_measured()) return "";
  const tunefleet::v1::MeasuredLatency& r = m.measured();
  if (!r.missing_reason().empty()) {
    return absl::StrCat("measured latency: missing: ", r.missing_reason());
  }
  std::string text = absl::StrFormat(
      "measured latency (end to end on %s, %u runs, record %s): median %s "
      "ms, p10 %s ms, p90 %s ms",
      r.agent_name().empty() ? "an agent" : r.agent_name(), r.runs(),
      r.record().empty() ? "off" : r.record(), MsText(r.median_ns()),
      MsText(r.p10_ns()), MsText(r.p90_ns()));
  if (r.estimate_ns() > 0) {
    absl::StrAppendFormat(
        &text, "; estimated %s ms (measured %.2fx the estimate)",
        MsText(r.estimate_ns()), r.median_ns() / r.estimate_ns());
  }
  if (r.device_buffers_median_ns() > 0) {
    absl::StrAppendFormat(
        &text,
        "; on the device (inputs and outputs in device buffers, %u runs): "
        "median %s ms, p10 %s ms, p90 %s ms",
        r.device_buffers_runs(), MsText(r.device_buffers_median_ns()),
        MsText(r.device_buffers_p10_ns()), MsText(r.device_buffers_p90_ns()));
  }
  return text;
}

namespace {

// Per workload key: trials done by its tasks and its speedup over naive
// (the naive reference time over the best time of its tasks; 0: none).
struct WorkloadFigures {
  uint32_t trials = 0;
  double best_ns = 0;
  double naive_ns = 0;
  double speedup() const {
    return best_ns > 0 && naive_ns > 0 ? naive_ns / best_ns : 0;
  }
};

std::map<std::string, WorkloadFigures> FiguresByWorkload(const JobProgress& p) {
  std::map<std::string, WorkloadFigures> out;
  for (const ModelTaskProgress& t : p.model().task_progress()) {
    const JobProgress& job = t.job();
    WorkloadFigures& f = out[job.workload_key()];
    f.trials += job.trials_done();
    if (job.has_best() && job.best().time_ns() > 0 &&
        (f.best_ns <= 0 || job.best().time_ns() < f.best_ns)) {
      f.best_ns = job.best().time_ns();
    }
    if (job.reference_time_ns() > 0) f.naive_ns = job.reference_time_ns();
  }
  return out;
}

}  // namespace

std::vector<ModelLayerRow> ModelLayerRows(const JobProgress& p) {
  const tunefleet::v1::MeasuredLatency& r = p.model().measured();
  const std::map<std::string, WorkloadFigures> figures = FiguresByWorkload(p);
  double total = 0;
  for (const auto& l : r.layers()) total += std::max(0.0, l.measured_ns());
  std::vector<ModelLayerRow> rows;
  for (const tunefleet::v1::MeasuredLayer& l : r.layers()) {
    ModelLayerRow row;
    row.layer = &l;
    row.share = total > 0 ? std::max(0.0, l.measured_ns()) / total : 0;
    auto it = figures.find(l.workload());
    if (it != figures.end()) {
      row.trials = it->second.trials;
      row.speedup = it->second.speedup();
    }
    rows.push_back(row);
  }
  return rows;
}

std::string ModelLayerTable(const JobProgress& p) {
  const std::vector<ModelLayerRow> layers = ModelLayerRows(p);
  if (layers.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < layers.size(); ++i) {
    const ModelLayerRow& r = layers[i];
    const tunefleet::v1::MeasuredLayer& l = *r.layer;
    rows.push_back({absl::StrCat(i), l.entry(), MsText(l.measured_ns()),
                    absl::StrFormat("%.1f%%", 100 * r.share),
                    l.estimate_ns() >= 0 ? MsText(l.estimate_ns()) : "-",
                    r.trials >= 0 ? absl::StrCat(r.trials) : "-",
                    r.speedup > 0 ? absl::StrFormat("%.2fx", r.speedup) : "-",
                    l.workload(), l.label()});
  }
  return FormatTable({"LAYER", "ENTRY", "MEASURED MS", "SHARE", "EST MS",
                      "TRIALS", "SPEEDUP", "WORKLOAD", "NODES"},
                     rows, {true, false, true, true, true, true, true});
}

std::string JobWorkloadCell(const JobProgress& p) {
  if (!p.has_model()) return p.workload_key();
  return absl::StrCat("model ", p.model().model_name(), " (", p.model().tasks(),
                      p.model().tasks() == 1 ? " task)" : " tasks)");
}

std::string JobBestCell(const JobProgress& p) {
  if (p.has_model()) {
    const tunefleet::v1::MeasuredLatency& r = p.model().measured();
    if (r.median_ns() > 0 && r.missing_reason().empty()) {
      return absl::StrCat(
          MsText(r.median_ns()), " ms (est ", MsText(r.estimate_ns()),
          r.device_buffers_median_ns() > 0
              ? absl::StrCat(", on device ",
                             MsText(r.device_buffers_median_ns()))
              : "",
          ")");
    }
    return p.model().latency_ns() > 0
               ? absl::StrCat("est ", MsText(p.model().latency_ns()), " ms")
               : "-";
  }
  return p.has_best() ? absl::StrFormat("%.2f GFLOP/s", p.best().gflops())
                      : "-";
}

std::string ModelTaskName(const ModelTaskProgress& t) {
  if (t.job().template_name().empty()) return t.job().workload_key();
  return absl::StrCat(t.job().workload_key(), " [", t.job().template_name(),
                      "]");
}

std::string ModelTaskTable(const JobProgress& p) {
  std::vector<std::vector<std::string>> rows;
  for (const ModelTaskProgress& t : p.model().task_progress()) {
    const JobProgress& job = t.job();
    rows.push_back(
        {absl::StrCat(t.task_index()), contract::JobStateName(job.state()),
         absl::StrFormat("%u/%u", job.trials_done(), t.trials_granted()),
         absl::StrCat("x", t.weight()),
         job.has_best() ? MsText(job.best().time_ns()) : "-",
         job.reference_time_ns() > 0 ? MsText(job.reference_time_ns()) : "-",
         job.template_name(), job.workload_key(), t.stopped_reason()});
  }
  std::string out = FormatTable({"TASK", "STATE", "TRIALS", "WEIGHT", "BEST MS",
                                 "NAIVE MS", "TEMPLATE", "WORKLOAD", "STOPPED"},
                                rows, {true, false, true, true, true, true});
  for (const tunefleet::v1::SkippedTask& s : p.model().skipped()) {
    absl::StrAppend(&out, "task ", s.task_index(), " skipped: ", s.reason(),
                    "\n");
  }
  return out;
}

std::vector<std::string> ModelTaskChanges::Update(const JobProgress& p) {
  std::vector<std::string> lines;
  for (const ModelTaskProgress& t : p.model().task_progress()) {
    Seen& seen = seen_[t.task_index()];
    const JobProgress& job = t.job();
    const std::string where =
        absl::StrCat("task ", t.task_index(), " ", ModelTaskName(t));
    if (job.has_best() &&
        (seen.best_ns <= 0 || job.best().time_ns() < seen.best_ns)) {
      seen.best_ns = job.best().time_ns();
      std::string line =
          absl::StrCat(where, ": best ", MsText(job.best().time_ns()), " ms");
      if (job.reference_time_ns() > 0) {
        absl::StrAppend(&line, " (naive ", MsText(job.reference_time_ns()),
                        " ms)");
      }
      absl::StrAppendFormat(&line, " after %u/%u trials", job.trials_done(),
                            t.trials_granted());
      lines.push_back(std::move(line));
    }
    if (!t.stopped_reason().empty() && !seen.stopped) {
      seen.stopped = true;
      lines.push_back(absl::StrCat(where, ": stopped after ", job.trials_done(),
                                   " trials (", t.stopped_reason(), ")"));
    }
  }
  return lines;
}

ModelProgressPrinter::ModelProgressPrinter(bool quiet, bool task_lines,
                                           FILE* out)
    : quiet_(quiet),
      task_lines_(task_lines),
      out_(out),
      tty_(isatty(fileno(out))) {}

void ModelProgressPrinter::Print(const std::string& line) {
  if (line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
  std::fprintf(out_, "%s\n", line.c_str());
}

void ModelProgressPrinter::Update(const JobProgress& p,
                                  std::chrono::steady_clock::time_point now) {
  if (quiet_) return;
  if (p.waiting_reason() != waiting_) {
    waiting_ = p.waiting_reason();
    if (!waiting_.empty()) {
      Print(absl::StrFormat("model job %lld waits: %s",
                            static_cast<long long>(p.job_id()), waiting_));
    }
  }
  if (task_lines_) {
    for (const std::string& line : changes_.Update(p)) Print(line);
  }
  const ModelProgress& m = p.model();
  // While some workload has no time yet, each naive time that arrives
  // raises the sum: not worth a line.
  const bool moved =
      m.latency_ns() > 0 && m.latency_complete() &&
      (!last_complete_ ||
       std::abs(m.latency_ns() - last_latency_) >= 0.01 * last_latency_);
  // Tasks stop in bursts (all of them as the model job ends): at most a
  // line a second for them.
  const bool stopped = m.tasks_stopped() != last_stopped_ &&
                       now - last_time_ >= std::chrono::seconds(1);
  const bool periodic =
      p.trials_done() != last_done_ && now - last_time_ >= kQuietPeriod;
  const bool ended = contract::IsFinalJobState(p.state());
  if (!tty_ && any_ && !moved && !stopped && !periodic &&
      !(ended && p.trials_done() != last_done_)) {
    std::fflush(out_);
    return;
  }
  const std::string line = ModelProgressLine(p) + ErrorsText(p);
  WriteProgressLine(out_, tty_, line, &line_open_);
  any_ = true;
  last_done_ = p.trials_done();
  last_latency_ = m.latency_ns();
  last_complete_ = m.latency_complete();
  last_stopped_ = m.tasks_stopped();
  last_time_ = now;
}

void ModelProgressPrinter::End() {
  if (!quiet_ && line_open_) std::fprintf(out_, "\n");
  line_open_ = false;
}

}  // namespace tunefleet::cli
