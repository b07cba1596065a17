// A model job's end-to-end measurement in the store: the ONNX model its
// request carried, its latency history, its measured latency and per-layer
// times (store.h; schema v8, the device-buffer figures v10).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "store/store.h"

namespace tunefleet::store {

absl::StatusOr<ModelJobModel> Store::GetModelJobModel(int64_t model_job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q, db_.Prepare("SELECT onnx, input_shapes FROM "
                               "model_job_models WHERE model_job_id = ?1"));
  q.Bind(1, model_job_id);
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) {
    return absl::NotFoundError(absl::StrCat(
        "model job ", model_job_id, " was submitted without its ONNX model"));
  }
  ModelJobModel m;
  m.onnx = q.Text(0);
  for (absl::string_view s :
       absl::StrSplit(q.Text(1), '\n', absl::SkipEmpty())) {
    m.input_shapes.emplace_back(s);
  }
  return m;
}

absl::Status Store::AddModelLatencyPoint(
    int64_t model_job_id, int seq, const tunefleet::v1::LatencyPoint& point) {
  absl::MutexLock lock(&mu_);
  return db_.Run(
      "INSERT OR REPLACE INTO model_job_latency (model_job_id, seq, "
      "trials_done, latency_ns) VALUES (?1, ?2, ?3, ?4)",
      model_job_id, int64_t{seq}, int64_t{point.trials_done()},
      point.latency_ns());
}

absl::StatusOr<std::vector<tunefleet::v1::LatencyPoint>>
Store::ModelLatencyHistory(int64_t model_job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare("SELECT trials_done, latency_ns FROM model_job_latency "
                  "WHERE model_job_id = ?1 ORDER BY seq",
                  model_job_id));
  return q.CollectRows([](const Statement& row) {
    tunefleet::v1::LatencyPoint p;
    p.set_trials_done(static_cast<uint32_t>(row.Int(0)));
    p.set_latency_ns(row.Double(1));
    return p;
  });
}

absl::Status Store::SetModelMeasurement(
    int64_t model_job_id, const tunefleet::v1::MeasuredLatency& m) {
  absl::MutexLock lock(&mu_);
  Transaction txn(db_);
  TUNEFLEET_RETURN_IF_ERROR(txn.status());
  TUNEFLEET_RETURN_IF_ERROR(db_.Run(
      "DELETE FROM model_job_layers WHERE model_job_id = ?1", model_job_id));
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement s,
      db_.Prepare("INSERT OR REPLACE INTO model_job_measurements "
                  "(model_job_id, missing_reason, median_ns, p10_ns, p90_ns, "
                  "runs, estimate_ns, agent_name, device_name, record, "
                  "commands_per_run, measured_ms, device_buffers_median_ns, "
                  "device_buffers_p10_ns, device_buffers_p90_ns, "
                  "device_buffers_runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                  "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"));
  s.Bind(1, model_job_id).Bind(2, m.missing_reason());
  s.Bind(3, m.median_ns()).Bind(4, m.p10_ns()).Bind(5, m.p90_ns());
  s.Bind(6, int64_t{m.runs()}).Bind(7, m.estimate_ns());
  s.Bind(8, m.agent_name()).Bind(9, m.device_name()).Bind(10, m.record());
  s.Bind(11, int64_t{m.commands_per_run()}).Bind(12, m.measured_ms());
  s.Bind(13, m.device_buffers_median_ns());
  s.Bind(14, m.device_buffers_p10_ns()).Bind(15, m.device_buffers_p90_ns());
  s.Bind(16, int64_t{m.device_buffers_runs()});
  TUNEFLEET_RETURN_IF_ERROR(s.Run());
  for (int i = 0; i < m.layers_size(); ++i) {
    const tunefleet::v1::MeasuredLayer& l = m.layers(i);
    TUNEFLEET_RETURN_IF_ERROR(db_.Run(
        "INSERT INTO model_job_layers (model_job_id, layer_index, label, "
        "workload, entry, measured_ns, estimate_ns) VALUES (?1, ?2, ?3, ?4, "
        "?5, ?6, ?7)",
        model_job_id, int64_t{i}, l.label(), l.workload(), l.entry(),
        l.measured_ns(), l.estimate_ns()));
  }
  return txn.Commit();
}

absl::StatusOr<std::optional<tunefleet::v1::MeasuredLatency>>
Store::GetModelMeasurement(int64_t model_job_id) {
  absl::MutexLock lock(&mu_);
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement q,
      db_.Prepare("SELECT missing_reason, median_ns, p10_ns, p90_ns, runs, "
                  "estimate_ns, agent_name, device_name, record, "
                  "commands_per_run, measured_ms, device_buffers_median_ns, "
                  "device_buffers_p10_ns, device_buffers_p90_ns, "
                  "device_buffers_runs FROM model_job_measurements WHERE "
                  "model_job_id = ?1",
                  model_job_id));
  TUNEFLEET_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return std::nullopt;
  tunefleet::v1::MeasuredLatency m;
  m.set_missing_reason(q.Text(0));
  m.set_median_ns(q.Double(1));
  m.set_p10_ns(q.Double(2));
  m.set_p90_ns(q.Double(3));
  m.set_runs(static_cast<uint32_t>(q.Int(4)));
  m.set_estimate_ns(q.Double(5));
  m.set_agent_name(q.Text(6));
  m.set_device_name(q.Text(7));
  m.set_record(q.Text(8));
  m.set_commands_per_run(static_cast<uint32_t>(q.Int(9)));
  m.set_measured_ms(q.Int(10));
  m.set_device_buffers_median_ns(q.Double(11));
  m.set_device_buffers_p10_ns(q.Double(12));
  m.set_device_buffers_p90_ns(q.Double(13));
  m.set_device_buffers_runs(static_cast<uint32_t>(q.Int(14)));
  TUNEFLEET_ASSIGN_OR_RETURN(
      Statement layers,
      db_.Prepare("SELECT label, workload, entry, measured_ns, estimate_ns "
                  "FROM model_job_layers WHERE model_job_id = ?1 ORDER BY "
                  "layer_index"));
  layers.Bind(1, model_job_id);
  TUNEFLEET_RETURN_IF_ERROR(layers.ForEachRow([&m](const Statement& r) {
    tunefleet::v1::MeasuredLayer* l = m.add_layers();
    l->set_label(r.Text(0));
    l->set_workload(r.Text(1));
    l->set_entry(r.Text(2));
    l->set_measured_ns(r.Double(3));
    l->set_estimate_ns(r.Double(4));
  }));
  return m;
}

}  // namespace tunefleet::store
