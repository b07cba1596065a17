// Store: the rows of record bundles, read for an export and merged on an
// import (store/exchange.h, docs/BUNDLES.md).
#include "store/exchange.h"

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/hash.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "kernels_templates/workload.h"
#include "store/store.h"

namespace tunefleet::store {
namespace {

// SHA-256 hex of `tag` and `fields`, each followed by a NUL byte.
std::string FieldsSha256(absl::string_view tag,
                         std::initializer_list<absl::string_view> fields) {
  std::string text(tag);
  text.push_back('\0');
  for (absl::string_view f : fields) {
    text.append(f.data(), f.size());
    text.push_back('\0');
  }
  return absl::BytesToHexString(base::Sha256(text));
}

// The SQL of an export's jobs (alias j) and their identities' columns.
constexpr absl::string_view kJobColumns =
    "j.id, j.device_key, w.op, w.shape, w.dtype, w.canonical, tp.name, "
    "tp.version, tp.source_hash, j.strategy, j.budget, j.seed, j.state, "
    "j.reference_ns, j.created_ms, j.finished_ms, j.space_size, j.origin_id";

}  // namespace

std::string MeasurementId(const MeasurementIdentity& m) {
  const std::string version = absl::StrCat(m.template_version);
  const std::string done = absl::StrCat(m.done_ms);
  return FieldsSha256("tunefleet-measurement-v1",
                      {m.device_key, m.workload, m.template_name, version,
                       m.template_source_hash, m.config, m.error, m.times_ns,
                       done, m.agent, m.driver_version, m.kernel_sha256});
}

std::string JobOriginId(const JobIdentity& j) {
  const std::string version = absl::StrCat(j.template_version);
  const std::string seed = absl::StrCat(j.seed);
  const std::string budget = absl::StrCat(j.budget);
  const std::string created = absl::StrCat(j.created_ms);
  return FieldsSha256(
      "tunefleet-job-v1",
      {j.device_key, j.workload, j.template_name, version,
       j.template_source_hash, j.strategy, seed, budget, created});
}

absl::StatusOr<ExchangeRows> Store::ExportRows(const ExchangeFilter& filter) {
  ExchangeRows rows;
  absl::MutexLock lock(&mu_);
  // The jobs, in id order.
  std::string sql = absl::StrCat(
      "SELECT ", kJobColumns,
      " FROM jobs j JOIN workloads w ON w.id = j.workload_id "
      "JOIN templates tp ON tp.id = j.template_id "
      "WHERE (?1 = '' OR j.device_key = ?1) AND (?2 = '' OR w.op = ?2) "
      "ORDER BY j.id");
  std::map<int64_t, size_t> job_at;            // job id -> rows.jobs index
  std::map<int64_t, std::string> workload_of;  // job id -> canonical
  std::set<std::string> keys;
  std::set<std::tuple<std::string, int, std::string>> templates;
  {
    TUNEFLEET_ASSIGN_OR_RETURN(Statement s,
                               db_.Prepare(sql, filter.device_key, filter.op));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& r) {
      ExchangeJob j;
      j.device_key = r.Text(1);
      j.op = r.Text(2);
      j.shape = r.Text(3);
      j.dtype = r.Text(4);
      j.template_name = r.Text(6);
      j.template_version = static_cast<int>(r.Int(7));
      j.template_source_hash = r.Text(8);
      j.strategy = r.Text(9);
      j.budget = r.Int(10);
      j.seed = static_cast<uint64_t>(r.Int(11));
      j.state = r.Text(12);
      j.reference_ns = r.DoubleOr(13, 0);
      j.created_ms = r.Int(14);
      j.finished_ms = r.IntOr(15, 0);
      j.space_size = static_cast<uint64_t>(r.Int(16));
      j.origin_id = r.IsNull(17)
                        ? JobOriginId(JobIdentity{
                              j.device_key, r.Text(5), j.template_name,
                              j.template_version, j.template_source_hash,
                              j.strategy, j.seed, j.budget, j.created_ms})
                        : r.Text(17);
      job_at[r.Int(0)] = rows.jobs.size();
      workload_of[r.Int(0)] = r.Text(5);
      keys.insert(j.device_key);
      templates.emplace(j.template_name, j.template_version,
                        j.template_source_hash);
      rows.jobs.push_back(std::move(j));
    }));
  }
  // Their measured trials, in id order.
  for (const auto& [job_id, at] : job_at) {
    const ExchangeJob& job = rows.jobs[at];
    // A name of its own: clang before 16 cannot capture a structured
    // binding in the lambda below.
    const std::string& workload = workload_of[job_id];
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare(
            "SELECT config_index, config, error, error_message, times_ns, "
            "time_ns, gflops, number, compile_ms, max_rel_error, created_ms, "
            "leased_ms, done_ms, agent, attempt, driver_version, "
            "kernel_sha256, tunefleet_version, measurement_id FROM trials "
            "WHERE job_id = ?1 AND state = 'done' AND error != 'CANCELLED' "
            "ORDER BY id",
            job_id));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& r) {
      ExchangeTrial t;
      t.job_origin_id = job.origin_id;
      t.config_index = static_cast<uint64_t>(r.Int(0));
      t.config = r.Text(1);
      t.error = r.Text(2);
      t.error_message = r.Text(3);
      t.times_ns = r.Text(4);
      t.time_ns = r.DoubleOr(5, 0);
      t.gflops = r.DoubleOr(6, 0);
      t.number = r.Int(7);
      t.compile_ms = r.DoubleOr(8, 0);
      t.max_rel_error = r.DoubleOr(9, 0);
      t.created_ms = r.Int(10);
      t.leased_ms = r.IntOr(11, 0);
      t.done_ms = r.Int(12);
      t.agent = r.Text(13);
      t.attempt = r.Int(14);
      t.driver_version = r.Text(15);
      t.kernel_sha256 = r.Text(16);
      t.tunefleet_version = r.Text(17);
      t.measurement_id =
          r.IsNull(18) ? MeasurementId(MeasurementIdentity{
                             job.device_key, workload, job.template_name,
                             job.template_version, job.template_source_hash,
                             t.config, t.error, t.times_ns, t.done_ms, t.agent,
                             t.driver_version, t.kernel_sha256})
                       : r.Text(18);
      rows.trials.push_back(std::move(t));
    }));
  }
  // Their templates' sources and their devices.
  for (const auto& [name, version, hash] : templates) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT op, source FROM templates WHERE name = ?1 AND "
                    "version = ?2 AND source_hash = ?3",
                    name, int64_t{version}, hash));
    TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) continue;
    rows.templates.push_back(
        ExchangeTemplate{name, version, s.Text(0), hash, s.Text(1)});
  }
  for (const std::string& key : keys) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT info_json, first_seen_ms, last_seen_ms FROM "
                    "devices WHERE device_key = ?1",
                    key));
    TUNEFLEET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) continue;  // a job whose agent never said Hello
    ExchangeDevice d;
    d.device_key = key;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (!google::protobuf::util::JsonStringToMessage(s.Text(0), &d.info,
                                                     options)
             .ok()) {
      return absl::InternalError(
          absl::StrCat("device '", key, "': its stored info does not parse"));
    }
    d.first_seen_ms = s.Int(1);
    d.last_seen_ms = s.Int(2);
    rows.devices.push_back(std::move(d));
  }
  return rows;
}

absl::StatusOr<MergeSummary> Store::MergeRows(const ExchangeRows& rows) {
  // Checks that need no database: identities match their content, every
  // trial's job is in the rows, every workload parses.
  std::map<std::string, const ExchangeJob*> jobs;
  std::map<std::string, std::string> canonical;  // origin id -> workload
  for (const ExchangeJob& j : rows.jobs) {
    absl::StatusOr<templates::Workload> w =
        templates::Workload::Parse(j.op, j.shape, j.dtype);
    if (!w.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ", j.origin_id, ": workload ", j.op, " ", j.shape,
                       " ", j.dtype, ": ", w.status().message()));
    }
    const std::string expected = JobOriginId(JobIdentity{
        j.device_key, w->Canonical(), j.template_name, j.template_version,
        j.template_source_hash, j.strategy, j.seed, j.budget, j.created_ms});
    if (expected != j.origin_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job ", j.origin_id, ": its origin id does not match its content"));
    }
    jobs[j.origin_id] = &j;
    canonical[j.origin_id] = w->Canonical();
  }
  for (const ExchangeTrial& t : rows.trials) {
    auto job = jobs.find(t.job_origin_id);
    if (job == jobs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trial ", t.measurement_id, ": its job ",
                       t.job_origin_id, " is not in the bundle"));
    }
    const ExchangeJob& j = *job->second;
    const std::string expected = MeasurementId(MeasurementIdentity{
        j.device_key, canonical[j.origin_id], j.template_name,
        j.template_version, j.template_source_hash, t.config, t.error,
        t.times_ns, t.done_ms, t.agent, t.driver_version, t.kernel_sha256});
    if (expected != t.measurement_id) {
      return absl::InvalidArgumentError(
          absl::StrCat("trial ", t.measurement_id,
                       ": its measurement id does not match its content"));
    }
  }

  MergeSummary summary;
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  for (const ExchangeDevice& d : rows.devices) {
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(d.info, &json);
    TUNEFLEET_RETURN_IF_ERROR(db_.Run(
        "INSERT OR IGNORE INTO devices (device_key, device_name, vendor, "
        "driver_version, info_json, first_seen_ms, last_seen_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        d.device_key, d.info.device_name(), d.info.vendor(),
        d.info.driver_version(), json, d.first_seen_ms, d.last_seen_ms));
    summary.devices_added += db_.Changes();
  }
  for (const ExchangeTemplate& t : rows.templates) {
    TUNEFLEET_RETURN_IF_ERROR(
        db_.Run("INSERT OR IGNORE INTO templates (name, version, op, "
                "source_hash, source) VALUES (?1, ?2, ?3, ?4, ?5)",
                t.name, int64_t{t.version}, t.op, t.source_hash, t.source));
    summary.templates_added += db_.Changes();
  }
  // Local jobs by their computed identity (a bundle that comes back to
  // the site it left), imported ones by their stored origin id.
  std::map<std::string, int64_t> job_ids;
  {
    std::set<std::string> keys;
    for (const ExchangeJob& j : rows.jobs) keys.insert(j.device_key);
    for (const std::string& key : keys) {
      TUNEFLEET_ASSIGN_OR_RETURN(
          Statement s,
          db_.Prepare(absl::StrCat("SELECT ", kJobColumns,
                                   " FROM jobs j JOIN workloads w ON w.id = "
                                   "j.workload_id JOIN templates tp ON tp.id = "
                                   "j.template_id WHERE j.device_key = ?1"),
                      key));
      TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& r) {
        const std::string id =
            r.IsNull(17)
                ? JobOriginId(JobIdentity{
                      r.Text(1), r.Text(5), r.Text(6),
                      static_cast<int>(r.Int(7)), r.Text(8), r.Text(9),
                      static_cast<uint64_t>(r.Int(11)), r.Int(10), r.Int(14)})
                : r.Text(17);
        job_ids[id] = r.Int(0);
      }));
    }
  }
  std::map<int64_t, std::set<std::string>> present;  // job id -> ids
  for (const ExchangeJob& j : rows.jobs) {
    if (auto it = job_ids.find(j.origin_id); it != job_ids.end()) {
      if (j.reference_ns > 0) {
        TUNEFLEET_RETURN_IF_ERROR(
            db_.Run("UPDATE jobs SET reference_ns = ?2 WHERE id = ?1 AND "
                    "(reference_ns IS NULL OR reference_ns <= 0 OR "
                    "reference_ns > ?2)",
                    it->second, j.reference_ns));
        summary.references_lowered += db_.Changes();
      }
      continue;
    }
    TUNEFLEET_ASSIGN_OR_RETURN(
        templates::Workload w,
        templates::Workload::Parse(j.op, j.shape, j.dtype));
    TUNEFLEET_ASSIGN_OR_RETURN(int64_t workload_id, UpsertWorkload(w));
    int64_t template_id = 0;
    {
      TUNEFLEET_ASSIGN_OR_RETURN(
          Statement q,
          db_.Prepare("SELECT id FROM templates WHERE name = ?1 AND "
                      "version = ?2 AND source_hash = ?3",
                      j.template_name, int64_t{j.template_version},
                      j.template_source_hash));
      TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) {
        return absl::InvalidArgumentError(
            absl::StrCat("job ", j.origin_id, ": template ", j.template_name,
                         " v", j.template_version, " (", j.template_source_hash,
                         ") is neither in the bundle nor in this database"));
      }
      template_id = q.Int(0);
    }
    {
      TUNEFLEET_ASSIGN_OR_RETURN(Statement q,
                                 db_.Prepare("SELECT 1 FROM devices WHERE "
                                             "device_key = ?1",
                                             j.device_key));
      TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) {
        return absl::InvalidArgumentError(
            absl::StrCat("job ", j.origin_id, ": device key '", j.device_key,
                         "' is neither in the bundle nor in this database"));
      }
    }
    TUNEFLEET_ASSIGN_OR_RETURN(const int64_t id, NextJobId());
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("INSERT INTO jobs (id, workload_id, template_id, "
                    "device_key, strategy, budget, seed, state, message, "
                    "reference_ns, created_ms, finished_ms, space_size, "
                    "origin_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'done', "
                    "?8, ?9, ?10, ?11, ?12, ?13)"));
    s.Bind(1, id).Bind(2, workload_id).Bind(3, template_id);
    s.Bind(4, j.device_key).Bind(5, j.strategy).Bind(6, j.budget);
    s.Bind(7, static_cast<int64_t>(j.seed));
    s.Bind(8, absl::StrCat("imported from a record bundle (origin state: ",
                           j.state, ")"));
    s.BindPositiveOrNull(9, j.reference_ns);
    s.Bind(10, j.created_ms);
    s.BindPositiveOrNull(11, j.finished_ms);
    s.Bind(12, static_cast<int64_t>(j.space_size)).Bind(13, j.origin_id);
    TUNEFLEET_RETURN_IF_ERROR(s.Run());
    job_ids[j.origin_id] = id;
    ++summary.jobs_added;
  }
  // The measurement ids each touched job has already: stored ones
  // (imported rows) and computed ones (rows measured here).
  for (const auto& [origin, job_id] : job_ids) {
    auto job = jobs.find(origin);
    if (job == jobs.end()) continue;
    const ExchangeJob& j = *job->second;
    std::set<std::string>& ids = present[job_id];
    const std::string& workload = canonical[origin];  // as above
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare("SELECT config, error, times_ns, done_ms, agent, "
                    "driver_version, kernel_sha256, measurement_id FROM "
                    "trials WHERE job_id = ?1 AND state = 'done'",
                    job_id));
    TUNEFLEET_RETURN_IF_ERROR(s.ForEachRow([&](const Statement& r) {
      ids.insert(r.IsNull(7) ? MeasurementId(MeasurementIdentity{
                                   j.device_key, workload, j.template_name,
                                   j.template_version, j.template_source_hash,
                                   r.Text(0), r.Text(1), r.Text(2), r.Int(3),
                                   r.Text(4), r.Text(5), r.Text(6)})
                             : r.Text(7));
    }));
  }
  for (const ExchangeTrial& t : rows.trials) {
    const int64_t job_id = job_ids.at(t.job_origin_id);
    if (!present[job_id].insert(t.measurement_id).second) {
      ++summary.trials_present;
      continue;
    }
    TUNEFLEET_ASSIGN_OR_RETURN(
        Statement s,
        db_.Prepare(
            "INSERT INTO trials (job_id, config_index, config, state, agent, "
            "attempt, error, error_message, times_ns, time_ns, gflops, "
            "number, compile_ms, max_rel_error, created_ms, leased_ms, "
            "done_ms, driver_version, kernel_sha256, tunefleet_version, "
            "measurement_id) VALUES (?1, ?2, ?3, 'done', ?4, ?5, ?6, ?7, ?8, "
            "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"));
    s.Bind(1, job_id).Bind(2, static_cast<int64_t>(t.config_index));
    s.Bind(3, t.config).Bind(4, t.agent).Bind(5, t.attempt).Bind(6, t.error);
    s.Bind(7, t.error_message).Bind(8, t.times_ns);
    if (t.error == "OK") {
      s.Bind(9, t.time_ns).Bind(10, t.gflops);
    } else {
      s.BindNull(9).BindNull(10);
    }
    s.Bind(11, t.number).Bind(12, t.compile_ms).Bind(13, t.max_rel_error);
    s.Bind(14, t.created_ms);
    s.BindPositiveOrNull(15, t.leased_ms);
    s.Bind(16, t.done_ms);
    s.BindTextOrNull(17, t.driver_version);
    s.BindTextOrNull(18, t.kernel_sha256);
    s.BindTextOrNull(19, t.tunefleet_version);
    s.Bind(20, t.measurement_id);
    absl::Status run = s.Run();
    if (!run.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trial ", t.measurement_id, " (config ", t.config,
                       "): cannot be stored: ", run.message()));
    }
    ++summary.trials_added;
  }
  TUNEFLEET_RETURN_IF_ERROR(txn.Commit());
  return summary;
}

}  // namespace tunefleet::store
