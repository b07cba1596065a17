// Store: tuning records, tallies and what an emitted library needs (the
// reference kernel's time, a template's stored source).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "contract/names.h"
#include "store/exchange.h"
#include "store/store.h"
#include "trial/trial_request.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

// Columns of a record query (alias t: trials), shared by every form.
constexpr absl::string_view kRecordColumns =
    "t.id, t.job_id, j.device_key, w.op, w.shape, w.dtype, tp.name, "
    "tp.version, t.config, t.error, t.time_ns, t.gflops, t.agent, "
    "t.created_ms, t.done_ms, t.compile_ms, t.error_message, "
    "t.driver_version, t.kernel_sha256, tp.source_hash, t.tunefleet_version, "
    "t.measurement_id, t.times_ns";
// The job, workload and template of trial t. CROSS JOIN keeps the row
// source on the left as SQLite's outer loop, so that a page is read in
// that source's order and stops at its LIMIT instead of being sorted from
// every matching row.
constexpr absl::string_view kRecordJoins =
    " CROSS JOIN jobs j ON t.job_id = j.id "
    "CROSS JOIN workloads w ON j.workload_id = w.id "
    "CROSS JOIN templates tp ON j.template_id = tp.id ";

tunefleet::v1::Config ParseConfigText(const std::string& text) {
  tunefleet::v1::Config config;
  for (absl::string_view token : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(token, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv.second, &value)) continue;
    auto* knob = config.add_knobs();
    knob->set_name(std::string(kv.first));
    knob->set_value(value);
  }
  return config;
}

// Workloads parsed once per query: the rows of a job (and most rows of a
// page) share one, and parsing it is most of a row's cost.
class WorkloadCache {
 public:
  // The workload of a row's op, shape and dtype (columns 3, 4, 5) as a
  // proto and its canonical key; null when it does not parse.
  const std::pair<tunefleet::v1::Workload, std::string>* Get(
      const Statement& s) {
    std::string key = absl::StrCat(s.Text(3), "\n", s.Text(4), "\n", s.Text(5));
    auto it = parsed_.find(key);
    if (it == parsed_.end()) {
      std::optional<std::pair<tunefleet::v1::Workload, std::string>> value;
      auto workload =
          templates::Workload::Parse(s.Text(3), s.Text(4), s.Text(5));
      if (workload.ok()) {
        value.emplace(trial::WorkloadToProto(*workload), workload->Canonical());
      }
      it = parsed_.emplace(std::move(key), std::move(value)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

 private:
  std::map<std::string,
           std::optional<std::pair<tunefleet::v1::Workload, std::string>>>
      parsed_;
};

tunefleet::v1::TuningRecord RecordFromRow(const Statement& s,
                                          WorkloadCache& workloads) {
  tunefleet::v1::TuningRecord r;
  r.set_trial_id(s.Int(0));
  r.set_job_id(s.Int(1));
  r.set_device_key(s.Text(2));
  if (const auto* workload = workloads.Get(s)) {
    *r.mutable_workload() = workload->first;
    r.set_workload_key(workload->second);
  }
  r.set_template_name(s.Text(6));
  r.set_template_version(static_cast<int32_t>(s.Int(7)));
  *r.mutable_config() = ParseConfigText(s.Text(8));
  Measurement::Error error = Measurement::ERROR_UNSPECIFIED;
  Measurement::Error_Parse(s.Text(9), &error);
  r.set_error(error);
  r.set_time_ns(s.Double(10));
  r.set_gflops(s.Double(11));
  r.set_agent_name(s.Text(12));
  r.set_created_unix_ms(s.Int(13));
  r.set_measured_unix_ms(s.Int(14));
  r.set_compile_ms(s.Double(15));
  r.set_error_message(s.Text(16));
  tunefleet::v1::Provenance& p = *r.mutable_provenance();
  p.set_driver_version(s.Text(17));
  p.set_kernel_sha256(s.Text(18));
  p.set_template_version(r.template_version());
  p.set_template_source_hash(s.Text(19));
  p.set_tunefleet_version(s.Text(20));
  p.set_measured_unix_ms(r.measured_unix_ms());
  p.set_agent_name(r.agent_name());
  p.set_imported(!s.IsNull(21));
  p.set_measurement_id(
      s.IsNull(21) ? MeasurementId(MeasurementIdentity{
                         r.device_key(), r.workload_key(), r.template_name(),
                         r.template_version(), p.template_source_hash(),
                         s.Text(8), s.Text(9), s.Text(22), r.measured_unix_ms(),
                         r.agent_name(), p.driver_version(), p.kernel_sha256()})
                   : s.Text(21));
  return r;
}

}  // namespace

absl::StatusOr<JobTally> Store::TallyJob(int64_t job_id) {
  JobTally tally;
  {
    absl::MutexLock lock(&mu_);
    // Kept by the schema's triggers (v4): one row per error code.
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT error, n FROM job_trial_counts WHERE job_id = ?1",
                    job_id));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&tally](const Statement& row) {
      // A trial the job's end left unmeasured is neither done nor an error
      // (the live job never counts it either).
      if (row.Text(0) == "CANCELLED") {
        tally.cancelled += row.Int(1);
        return;
      }
      tally.errors[row.Text(0)] = static_cast<uint32_t>(row.Int(1));
      tally.done += row.Int(1);
    }));
  }
  RecordFilter filter;
  filter.job_id = job_id;
  filter.best_only = true;
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<tunefleet::v1::TuningRecord> best,
                             QueryRecords(filter));
  if (!best.empty()) tally.best = best.front();
  return tally;
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Store::QueryRecords(
    const RecordFilter& filter) {
  // Only the filter's terms go into the SQL, so that SQLite can use the
  // indexes they allow (a term like "(?1 = 0 OR t.job_id = ?1)" would hide
  // them). Parameters are numbered in the order they are added.
  std::vector<std::string> terms;
  std::vector<std::variant<int64_t, std::string>> args;
  auto add = [&terms, &args](absl::string_view term, auto value) {
    terms.push_back(std::string(term));
    args.emplace_back(value);
  };
  std::string source;
  std::string order;
  if (filter.best_only && filter.job_id > 0) {
    // A job is one task: its best record is job_best's row.
    source = "job_best b CROSS JOIN trials t ON t.id = b.trial_id";
    add("b.job_id = ?", filter.job_id);
    order = "j.device_key, w.op, w.shape, w.dtype, tp.name, t.id";
  } else if (filter.best_only) {
    // One row per (device key, workload, template name): a few thousand
    // at most, so the offset of a page walks this table, not the trials.
    source = "best_records b CROSS JOIN trials t ON t.id = b.trial_id";
    if (!filter.device_key.empty()) {
      add("b.device_key = ?", filter.device_key);
    }
    if (!filter.template_name.empty()) {
      add("b.template_name = ?", filter.template_name);
    }
    order = "j.device_key, w.op, w.shape, w.dtype, tp.name, t.id";
  } else {
    // Keyset pages: trials after the last id sent, in id order, through
    // the primary key (or trials_by_job for one job).
    source = "trials t";
    terms.push_back("t.state = 'done'");
    if (filter.measured_only) terms.push_back("t.error != 'CANCELLED'");
    add("t.id > ?", filter.after_trial_id);
    if (filter.job_id > 0) add("t.job_id = ?", filter.job_id);
    if (!filter.device_key.empty()) {
      add("j.device_key = ?", filter.device_key);
    }
    if (!filter.template_name.empty()) {
      add("tp.name = ?", filter.template_name);
    }
    order = "t.id";
  }
  if (!filter.op.empty()) add("w.op = ?", filter.op);
  std::string sql =
      absl::StrCat("SELECT ", kRecordColumns, " FROM ", source, kRecordJoins);
  if (!terms.empty()) {
    absl::StrAppend(&sql, "WHERE ", absl::StrJoin(terms, " AND "));
  }
  absl::StrAppend(&sql, " ORDER BY ", order, " LIMIT ? OFFSET ?");
  args.emplace_back(filter.limit > 0 ? filter.limit : int64_t{-1});
  args.emplace_back(filter.best_only ? filter.offset : int64_t{0});
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql));
  for (size_t i = 0; i < args.size(); ++i) {
    std::visit([&s, i](const auto& v) { s.Bind(static_cast<int>(i + 1), v); },
               args[i]);
  }
  std::vector<tunefleet::v1::TuningRecord> out;
  WorkloadCache workloads;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& row) {
    out.push_back(RecordFromRow(row, workloads));
  }));
  return out;
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>>
Store::BestRecordsOnDriver(const std::string& key, const std::string& driver,
                           bool with_unrecorded) {
  // Fastest first within each task, so the first row of a task is its best
  // (ties: the lower trial id, as best_records keeps them).
  const std::string sql = absl::StrCat(
      "SELECT ", kRecordColumns, ", j.workload_id FROM jobs j ",
      "CROSS JOIN trials t ON t.job_id = j.id "
      "CROSS JOIN workloads w ON j.workload_id = w.id "
      "CROSS JOIN templates tp ON j.template_id = tp.id "
      "WHERE j.device_key = ?1 AND t.state = 'done' AND t.error = 'OK' AND "
      "(t.driver_version = ?2 OR (?3 AND t.driver_version IS NULL)) "
      "ORDER BY w.op, w.shape, w.dtype, tp.name, t.time_ns, t.id");
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare(sql, key, driver, int64_t{with_unrecorded ? 1 : 0}));
  std::vector<tunefleet::v1::TuningRecord> out;
  std::pair<int64_t, std::string> last{-1, ""};  // (workload id, template)
  WorkloadCache workloads;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& row) {
    std::pair<int64_t, std::string> task{row.Int(23), row.Text(6)};
    if (task == last) return;
    last = std::move(task);
    out.push_back(RecordFromRow(row, workloads));
  }));
  return out;
}

absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Store::HistoryRecords(
    const std::string& op, const std::string& template_name, int64_t max_rows) {
  std::vector<tunefleet::v1::TuningRecord> out;
  if (max_rows <= 0) return out;
  absl::MutexLock lock(&mu_);
  // The template's jobs, newest first (templates by name, jobs through
  // jobs_by_template): one row per job, never per trial.
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement jobs,
      db_.Prepare("SELECT j.id FROM templates tp "
                  "CROSS JOIN jobs j ON j.template_id = tp.id "
                  "CROSS JOIN workloads w ON w.id = j.workload_id "
                  "WHERE tp.name = ?1 AND w.op = ?2 ORDER BY j.id DESC",
                  template_name, op));
  std::vector<int64_t> job_ids;
  TUNEFLEET_RETURN_IF_ERROR(jobs.ForEachRow(
      [&job_ids](const Statement& row) { job_ids.push_back(row.Int(0)); }));
  // Then each job's measured trials in id order (trials_by_job), until
  // max_rows trial rows have been read.
  const std::string sql = absl::StrCat(
      "SELECT ", kRecordColumns, " FROM trials t", kRecordJoins,
      "WHERE t.job_id = ?1 AND t.state = 'done' AND "
      "t.error NOT IN ('CANCELLED', 'DEVICE_LOST') ORDER BY t.id LIMIT ?2");
  WorkloadCache workloads;
  for (int64_t job_id : job_ids) {
    const int64_t left = max_rows - static_cast<int64_t>(out.size());
    if (left <= 0) break;
    TUNEFLEET_ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql, job_id, left));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& row) {
      out.push_back(RecordFromRow(row, workloads));
    }));
  }
  return out;
}

absl::StatusOr<std::optional<double>> Store::ReferenceTime(
    const std::string& device_key, const std::string& workload,
    const std::string& template_name) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT MIN(j.reference_ns) FROM jobs j "
                  "JOIN workloads w ON j.workload_id = w.id "
                  "JOIN templates tp ON j.template_id = tp.id "
                  "WHERE j.device_key = ?1 AND w.canonical = ?2 AND "
                  "tp.name = ?3 AND j.reference_ns > 0",
                  device_key, workload, template_name));
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<double>();
  return std::optional<double>(s.Double(0));
}

absl::StatusOr<std::string> Store::TemplateSource(const std::string& name,
                                                  int version) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("SELECT source FROM templates WHERE name = ?1 AND "
                  "version = ?2 ORDER BY id DESC LIMIT 1",
                  name, int64_t{version}));
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("no stored source for template ", name, " v", version));
  }
  return s.Text(0);
}

}  // namespace tunefleet::store
