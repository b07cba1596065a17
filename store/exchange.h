// The rows a record bundle carries between sites (issue 39,
// docs/BUNDLES.md), as the store reads and merges them: devices, templates,
// jobs (with their naive reference times) and every measured trial with
// its provenance. The file format, its digest and signature are bundle/'s;
// this is what the rows are and how a database takes them in.
#ifndef TUNEFLEET_STORE_EXCHANGE_H_
#define TUNEFLEET_STORE_EXCHANGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::store {

// What identifies a measurement on every site: its task, config, result,
// provenance and when it was stored. Two rows with the same identity are
// the same measurement (the second import of a bundle finds its trials by
// it).
struct MeasurementIdentity {
  std::string device_key;
  std::string workload;  // canonical workload string
  std::string template_name;
  int template_version = 0;
  std::string template_source_hash;
  std::string config;    // "MWG=64,NWG=64,..." as stored
  std::string error;     // Measurement.Error name
  std::string times_ns;  // the per-round times as stored: "[t1,t2,...]"
  int64_t done_ms = 0;   // Unix ms the measurement was stored
  std::string agent;
  std::string driver_version;
  std::string kernel_sha256;
};

// SHA-256, 64 lowercase hex digits, of "tunefleet-measurement-v1" and the
// identity's fields, each followed by a NUL byte (numbers in decimal).
std::string MeasurementId(const MeasurementIdentity& m);

// What identifies a job on every site: its task and how it was started.
struct JobIdentity {
  std::string device_key;
  std::string workload;  // canonical
  std::string template_name;
  int template_version = 0;
  std::string template_source_hash;
  std::string strategy;  // its name in the store ("xgb")
  uint64_t seed = 0;
  int64_t budget = 0;
  int64_t created_ms = 0;
};

// SHA-256 hex of "tunefleet-job-v1" and the fields, as MeasurementId.
std::string JobOriginId(const JobIdentity& j);

struct ExchangeDevice {
  std::string device_key;
  tunefleet::v1::DeviceInfo info;
  int64_t first_seen_ms = 0;  // Unix ms
  int64_t last_seen_ms = 0;   // Unix ms
};

struct ExchangeTemplate {
  std::string name;
  int version = 0;
  std::string op;
  std::string source_hash;  // KernelTemplate::SourceHash of `source`
  std::string source;       // the OpenCL C source as stored
};

struct ExchangeJob {
  std::string origin_id;  // JobOriginId of the fields below
  std::string device_key;
  std::string op, shape, dtype;  // the workload as the store keeps it
  std::string template_name;
  int template_version = 0;
  std::string template_source_hash;
  std::string strategy;
  int64_t budget = 0;
  uint64_t seed = 0;
  std::string state;        // the origin job's state name ("done")
  double reference_ns = 0;  // naive reference kernel, ns; 0: unmeasured
  int64_t created_ms = 0;   // Unix ms
  int64_t finished_ms = 0;  // Unix ms; 0: not finished
  uint64_t space_size = 0;  // valid configs; 0: unknown
};

struct ExchangeTrial {
  std::string measurement_id;  // MeasurementId of its content
  std::string job_origin_id;   // its ExchangeJob's origin_id
  uint64_t config_index = 0;
  std::string config;
  std::string error;  // Measurement.Error name
  std::string error_message;
  std::string times_ns;  // per-round times, ns, as stored: "[t1,...]"
  double time_ns = 0;    // median, ns; 0 unless OK
  double gflops = 0;     // 0 unless OK
  int64_t number = 0;    // launches per round
  double compile_ms = 0;
  double max_rel_error = 0;
  int64_t created_ms = 0;  // Unix ms
  int64_t leased_ms = 0;   // Unix ms; 0: unknown
  int64_t done_ms = 0;     // Unix ms the measurement was stored
  std::string agent;
  int64_t attempt = 0;
  std::string driver_version;     // provenance; "" unknown
  std::string kernel_sha256;      // provenance; "" unknown
  std::string tunefleet_version;  // provenance; "" unknown
};

struct ExchangeRows {
  std::vector<ExchangeDevice> devices;
  std::vector<ExchangeTemplate> templates;
  std::vector<ExchangeJob> jobs;
  std::vector<ExchangeTrial> trials;  // in the origin's trial id order
};

// Which records to export; empty: any.
struct ExchangeFilter {
  std::string device_key;
  std::string op;
};

// What a merge changed: rows added, and trials it already had.
struct MergeSummary {
  int64_t devices_added = 0;
  int64_t templates_added = 0;
  int64_t jobs_added = 0;
  int64_t trials_added = 0;
  int64_t trials_present = 0;      // already here (same measurement id)
  int64_t references_lowered = 0;  // jobs whose reference time got faster
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_EXCHANGE_H_
