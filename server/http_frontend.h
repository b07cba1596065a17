// The daemon's web dashboard (tunefleet-server --http ADDR): the pages and
// JSON API of dashboard/http_server.h over the server's store, its
// connected agents (LeaseScheduler) and its running jobs (JobManager). The
// same data from a database file alone is dashboard/store_source.h's.
#ifndef TUNEFLEET_SERVER_HTTP_FRONTEND_H_
#define TUNEFLEET_SERVER_HTTP_FRONTEND_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dashboard/http_server.h"
#include "dashboard/store_source.h"
#include "server/job_manager.h"
#include "server/lease_scheduler.h"
#include "store/store.h"

namespace tunefleet::server {

// The running daemon's: a dashboard::StoreDataSource with live progress of
// running jobs, connected agents with their last heartbeat, in-flight trials,
// and cancel. All must outlive it. Thread-safe.
class LiveDataSource : public dashboard::StoreDataSource {
 public:
  LiveDataSource(store::Store* store, LeaseScheduler* scheduler,
                 JobManager* jobs)
      : StoreDataSource(store), scheduler_(scheduler), jobs_(jobs) {}

  absl::StatusOr<data_source::FleetView> Fleet() override;
  absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> Jobs(
      int64_t limit) override;
  absl::StatusOr<tunefleet::v1::JobProgress> Job(int64_t job_id) override;
  bool CanCancel() const override { return true; }
  absl::StatusOr<tunefleet::v1::JobProgress> Cancel(int64_t job_id) override;

 private:
  LeaseScheduler* scheduler_;
  JobManager* jobs_;
};

// The daemon's dashboard: a LiveDataSource served over HTTP(S) until
// destroyed or Stop()ped. Thread-safe.
class HttpFrontend {
 public:
  // Errors: dashboard::HttpServer::Start's.
  static absl::StatusOr<std::unique_ptr<HttpFrontend>> Start(
      const dashboard::HttpOptions& options, store::Store* store,
      LeaseScheduler* scheduler, JobManager* jobs);

  int port() const { return http_->port(); }
  std::string address() const { return http_->address(); }
  bool tls() const { return http_->tls(); }
  void SetTokens(std::shared_ptr<const auth::TokenSet> tokens) {
    http_->SetTokens(std::move(tokens));
  }
  // Stops serving (before the store, scheduler and jobs go away).
  void Stop() { http_->Stop(); }

  // Use Start().
  explicit HttpFrontend(std::unique_ptr<LiveDataSource> source)
      : source_(std::move(source)) {}

 private:
  std::unique_ptr<LiveDataSource> source_;
  std::unique_ptr<dashboard::HttpServer> http_;  // after source_: stops first
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_HTTP_FRONTEND_H_
