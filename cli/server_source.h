// The DataSource (data_source/data_source.h) over a tunefleet-server's
// TuningService (gRPC): what `tunefleet jobs --server`, `watch`, `cancel`,
// `query`, `devices`, `emit` and `run` read and do through, as the
// commands that read a database file go through dashboard::StoreDataSource
// (dashboard/store_source.h). OpenDataSource picks one of the two from the
// flags.
#ifndef TUNEFLEET_CLI_SERVER_SOURCE_H_
#define TUNEFLEET_CLI_SERVER_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/common.h"
#include "client/channel.h"
#include "data_source/data_source.h"
#include "grpcpp/grpcpp.h"
#include "tunefleet/v1/tuning.grpc.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

// How long one call to the server may take (a page of a list call counts
// as one); WatchJob's stream has no deadline.
inline constexpr absl::Duration kCallDeadline = absl::Seconds(60);

// Every call is one RPC or a few (pages), each with kCallDeadline
// (DEADLINE_EXCEEDED past it), each failure as FromGrpc words it (naming
// the server). Thread-safe (gRPC stubs are).
class ServerDataSource : public data_source::DataSource {
 public:
  // Dials the server at `address` (HOST:PORT) with the connection flags'
  // `files`. `page_size`: jobs per ListJobs request in Jobs() (1 ..
  // 10,000; 0: 1,000, or as many as are still wanted when fewer).
  // `record_page_size`: records per QueryRecords request in Records() for
  // a query that names none (`emit --page-size`; 0: the server's default).
  // Errors: client::ConnectionTo's.
  static absl::StatusOr<std::unique_ptr<ServerDataSource>> Dial(
      const std::string& address, const client::ChannelFiles& files,
      uint32_t page_size = 0, uint32_t record_page_size = 0);

  ServerDataSource(TuningClient tuning, uint32_t page_size,
                   uint32_t record_page_size = 0)
      : tuning_(std::move(tuning)),
        page_size_(page_size),
        record_page_size_(record_page_size) {}

  // What the commands use (`jobs --server`, `cancel`, `watch`):
  // ListJobs, page after page, until `limit` jobs (newest first) or the
  // last page. Errors: INTERNAL when the server sends the same page token
  // again.
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t limit) override;
  // CancelJob.
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id) override;
  bool CanCancel() const override { return true; }
  // GetJob.
  absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t job_id) override;
  // WatchJob's stream (`tunefleet watch --server`). Errors: WatchJob's
  // (cli/common.h): UNAVAILABLE when the server goes away mid-job.
  absl::StatusOr<tunefleet::v1::JobProgress> Watch(
      int64_t job_id, const data_source::ProgressUpdate& update) override;

  // The rest of the dashboard's reads:
  // ListDevices: the device keys with their connected agents, by name
  // (live). The contract carries no per-agent counts, capacity or last
  // heartbeat: those stay 0.
  absl::StatusOr<data_source::FleetView> Fleet() override;
  // QueryRecords of the job (of each task's job for a model job, as GetJob
  // lists them), cancelled trials left out. QueryRecords cannot start
  // after a trial id, so every call reads the job's records from its
  // first.
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t job_id, int64_t after_trial_id, int64_t limit) override;
  // QueryRecords, following next_page_token (`tunefleet query --server`),
  // `record_page_size` records per page when the query names none. The
  // RecordReader reads (`emit --server`, `run --server`) are
  // data_source::DataSource's defaults over ListDevices, ListJobs and
  // QueryRecords; the server sends no template sources, so this build's
  // stand in.
  absl::Status Records(const data_source::RecordQuery& query,
                       const data_source::RecordPage& page) override;

 private:
  // One call of `rpc` with `request`; its error as FromGrpc words it.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (tunefleet::v1::TuningService::Stub::*rpc)(
          grpc::ClientContext*, const Request&, Response*),
      const Request& request) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kCallDeadline));
    Response response;
    absl::Status status = FromGrpc(
        ((*tuning_.stub).*rpc)(&context, request, &response), tuning_.server);
    if (!status.ok()) return status;
    return response;
  }

  TuningClient tuning_;
  uint32_t page_size_;
  uint32_t record_page_size_;
};

// Where a command reads jobs from: a server (`server` non-empty, with the
// connection flags `connection`) or else the database file `db`.
struct SourceFlags {
  std::string server;
  client::ChannelFiles connection;  // token and TLS for `server`
  std::string db;
  uint32_t page_size = 0;         // jobs per ListJobs page (Dial)
  uint32_t record_page_size = 0;  // records per QueryRecords page (Dial)
};

// A dashboard::StoreDataSource owning the database file `db`, opened with
// OpenDatabase (which refuses to create it). Errors: OpenDatabase's.
absl::StatusOr<std::unique_ptr<data_source::DataSource>> OpenDatabaseSource(
    const std::string& db);

// The DataSource of `flags`: ServerDataSource::Dial(server) when a server
// is named, else OpenDatabaseSource(db). Errors: theirs.
absl::StatusOr<std::unique_ptr<data_source::DataSource>> OpenDataSource(
    const SourceFlags& flags);

// A reader without records (no database yet): every key is unknown, so a
// model plan runs every layer's naive kernel (`tunefleet run` before any
// tuning).
std::unique_ptr<data_source::RecordReader> MakeEmptyRecords();

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_SERVER_SOURCE_H_
