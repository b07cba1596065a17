// Store: tuning records, tallies and what an emitted library needs (the
// reference kernel's time, a template's stored source).
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/time.h"
#include "proto/names.h"
#include "store/store.h"
#include "trial/trial_request.h"

namespace tunefleet::store {
namespace {

using tunefleet::v1::Measurement;

// Columns of a record query, shared by QueryRecords' two forms.
constexpr absl::string_view kRecordColumns =
    "t.id, t.job_id, j.device_key, w.op, w.shape, w.dtype, tp.name, "
    "tp.version, t.config, t.error, t.time_ns, t.gflops, t.agent, "
    "t.created_ms, t.done_ms, t.compile_ms, t.error_message";
constexpr absl::string_view kRecordJoins =
    "FROM trials t JOIN jobs j ON t.job_id = j.id "
    "JOIN workloads w ON j.workload_id = w.id "
    "JOIN templates tp ON j.template_id = tp.id ";
constexpr absl::string_view kRecordFilter =
    "t.state = 'done' AND (?1 = '' OR w.op = ?1) AND "
    "(?2 = '' OR j.device_key = ?2) AND (?3 = 0 OR t.job_id = ?3) AND "
    "(?4 = '' OR tp.name = ?4)";
// A page: ?5 rows at most (-1: all) after skipping ?6 of them.
constexpr absl::string_view kRecordPage = " LIMIT ?5 OFFSET ?6";

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

tunefleet::v1::TuningRecord RecordFromRow(const Statement& s) {
  tunefleet::v1::TuningRecord r;
  r.set_trial_id(s.Int(0));
  r.set_job_id(s.Int(1));
  r.set_device_key(s.Text(2));
  auto workload = templates::Workload::Parse(s.Text(3), s.Text(4), s.Text(5));
  if (workload.ok()) {
    *r.mutable_workload() = trial::WorkloadToProto(*workload);
    r.set_workload_key(workload->Canonical());
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
  return r;
}

}  // namespace

absl::StatusOr<JobTally> Store::TallyJob(int64_t job_id) {
  JobTally tally;
  {
    absl::MutexLock lock(&mu_);
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT error, COUNT(*) FROM trials WHERE job_id = ?1 "
                    "AND state = 'done' GROUP BY error",
                    job_id));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&tally](const Statement& row) {
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
  const std::string sql =
      filter.best_only
          ? absl::StrCat(
                "SELECT * FROM (SELECT ", kRecordColumns,
                ", ROW_NUMBER() OVER (PARTITION BY j.device_key, w.id, "
                "tp.name ORDER BY t.time_ns, t.id) AS rank ",
                kRecordJoins, "WHERE ", kRecordFilter,
                " AND t.error = 'OK') WHERE rank = 1 ORDER BY 3, 4, 5, 6, 7",
                kRecordPage)
          : absl::StrCat("SELECT ", kRecordColumns, " ", kRecordJoins, "WHERE ",
                         kRecordFilter, " AND t.id > ?7 ORDER BY t.id",
                         kRecordPage);
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s, db_.Prepare(sql, filter.op, filter.device_key, filter.job_id,
                               filter.template_name,
                               filter.limit > 0 ? filter.limit : int64_t{-1},
                               filter.best_only ? filter.offset : int64_t{0}));
  if (!filter.best_only) s.Bind(7, filter.after_trial_id);
  std::vector<tunefleet::v1::TuningRecord> out;
  TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow(
      [&out](const Statement& row) { out.push_back(RecordFromRow(row)); }));
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
