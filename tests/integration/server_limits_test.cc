// The server's bounds on work, with a real tunefleet-server process
// (docs/SERVER_LIMITS.md): 5,000 WatchJob streams and a model job of 4,096
// tasks leave its thread count (/proc/PID/status) within a constant of
// what it started with, and cancelling the model job gives its memory
// back (RSS within 10% of what it was before); the limits on active jobs,
// tasks per model job and streams per token refuse with
// RESOURCE_EXHAUSTED naming their flag.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/channel.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/sanitizers.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;
using ::testing::HasSubstr;
using tunefleet::v1::JobProgress;

constexpr char kLimitsKey[] = "limits";
// Threads the server may add to what it had before the streams and the
// model job: gRPC's own pools and the odd call in flight. The job
// executor's threads are there from the start.
constexpr int kThreadSlack = 24;

// A field of /proc/PID/status ("Threads", "VmRSS"), as a number.
int64_t Status(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream value(line.substr(field.size() + 1));
      int64_t n = 0;
      value >> n;
      return n;
    }
  }
  return -1;
}
int64_t Threads(pid_t pid) { return Status(pid, "Threads"); }
// The CPU time the process used so far (user + system), in clock ticks
// (/proc/PID/stat fields 14 and 15).
int64_t CpuTicks(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}
int64_t RssKb(pid_t pid) { return Status(pid, "VmRSS"); }

// WatchJob streams on the callback client API: each counts its first
// message and its end.
class Watchers {
 public:
  class Stream final : public grpc::ClientReadReactor<JobProgress> {
   public:
    Stream(Watchers* owner, tunefleet::v1::TuningService::Stub* stub,
           int64_t job_id, const std::string& token)
        : owner_(owner) {
      context_.AddMetadata("authorization", "Bearer " + token);
      request_.set_job_id(job_id);
      stub->async()->WatchJob(&context_, &request_, this);
      StartRead(&progress_);
      StartCall();
    }
    void OnReadDone(bool ok) override {
      if (!ok) return;  // OnDone follows
      if (!first_) {
        first_ = true;
        owner_->first_.fetch_add(1);
      }
      StartRead(&progress_);
    }
    void OnDone(const grpc::Status& status) override { owner_->Done(status); }
    void Cancel() { context_.TryCancel(); }

   private:
    Watchers* const owner_;
    grpc::ClientContext context_;
    tunefleet::v1::WatchJobRequest request_;
    JobProgress progress_;
    bool first_ = false;
  };

  Watchers(const std::string& address, const std::string& token)
      : token_(token) {
    client::ChannelOptions channel;
    stub_ = tunefleet::v1::TuningService::NewStub(
        client::CreateServerChannel(address, channel));
  }
  ~Watchers() { CancelAll(); }

  void Open(int n, int64_t job_id) {
    for (int i = 0; i < n; ++i) {
      streams_.push_back(
          std::make_unique<Stream>(this, stub_.get(), job_id, token_));
    }
  }
  int first() const { return first_.load(); }
  // Ends every stream and waits for all to be done.
  void CancelAll() {
    for (auto& s : streams_) s->Cancel();
    absl::MutexLock lock(&mu_);
    auto all = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return done_ == static_cast<int>(streams_.size());
    };
    mu_.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(60));
  }
  // The statuses of the streams that ended.
  std::vector<grpc::Status> ended() {
    absl::MutexLock lock(&mu_);
    return statuses_;
  }

 private:
  void Done(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    ++done_;
    statuses_.push_back(status);
  }

  std::string token_;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::atomic<int> first_{0};
  absl::Mutex mu_;
  int done_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<grpc::Status> statuses_ ABSL_GUARDED_BY(mu_);
};

// A model job of `tasks` softmax tasks (one workload each) on kLimitsKey:
// random search, no transfer, nothing to measure until an agent comes.
tunefleet::v1::SubmitModelJobRequest ManyTasks(int tasks) {
  tunefleet::v1::SubmitModelJobRequest r;
  r.set_model_name("many_tasks");
  r.set_device_key(kLimitsKey);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_trials(static_cast<uint32_t>(tasks) * 2);
  r.set_no_transfer(true);
  for (int i = 0; i < tasks; ++i) {
    tunefleet::v1::ModelTask* task = r.add_tasks();
    *task->mutable_workload() = trial::WorkloadToProto(
        *templates::Workload::Parse("softmax", absl::StrCat("N=1,D=", 8 + i)));
    task->set_weight(1);
  }
  return r;
}

grpc::Status SubmitModel(FleetHarness& fleet,
                         const tunefleet::v1::SubmitModelJobRequest& request,
                         int64_t* id) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(300));
  tunefleet::v1::SubmitModelJobResponse response;
  grpc::Status s = fleet.Stub()->SubmitModelJob(&context, request, &response);
  *id = response.job_id();
  return s;
}

// A server whose store knows device key kLimitsKey (an agent came and went),
// started with `args`.
void StartWithKnownKey(FleetHarness& fleet,
                       const std::vector<std::string>& args) {
  ASSERT_TRUE(fleet.StartServer(args))
      << testing::ReadAll(fleet.dir() + "/server.log");
  ASSERT_TRUE(fleet.StartAgents(1, kLimitsKey))
      << testing::ReadAll(fleet.agent_log(0));
  fleet.agent(0).Kill(SIGTERM);
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet.Connected(kLimitsKey) == 0; },
                            std::chrono::seconds(30)));
}

TEST(ServerLimits, ThreadsStayBoundedAndACancelledModelJobGivesItsMemoryBack) {
  FleetHarness fleet("server_limits");
  StartWithKnownKey(fleet,
                    {"--max-watch-streams", "6000", "--job-threads", "4"});
  const pid_t pid = fleet.server().pid();
  // A job that waits for an agent: the streams watch it.
  const int64_t job =
      fleet.Submit(testing::SmallGemmJob(kLimitsKey, 10, /*cooldown_ms=*/0, 1));
  ASSERT_GT(job, 0);
  const int64_t threads_start = Threads(pid);
  ASSERT_GT(threads_start, 0);

  constexpr int kStreams = 5000;
  Watchers watchers(fleet.address(), fleet.reader_token());
  watchers.Open(kStreams, job);
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return watchers.first() == kStreams; }, std::chrono::seconds(120)))
      << watchers.first() << " of " << kStreams << " streams started";
  const int64_t threads_streams = Threads(pid);
  EXPECT_LE(threads_streams, threads_start + kThreadSlack)
      << "threads: " << threads_start << " at the start, " << threads_streams
      << " with " << kStreams << " WatchJob streams";

  // What the open streams cost while nothing changes (printed, not
  // asserted: it is a rate).
  const int64_t ticks_start = CpuTicks(pid);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double idle_cpu = 100.0 *
                          static_cast<double>(CpuTicks(pid) - ticks_start) /
                          static_cast<double>(sysconf(_SC_CLK_TCK)) / 2.0;

  const int64_t rss_before = RssKb(pid);
  const auto submit_start = std::chrono::steady_clock::now();
  int64_t model = 0;
  const grpc::Status submitted = SubmitModel(fleet, ManyTasks(4096), &model);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  const double submit_s = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - submit_start)
                              .count();
  // Every task's job set up and waiting for a grant.
  std::optional<JobProgress> running;
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        running = fleet.GetJob(model, std::chrono::seconds(60));
        if (!running || running->model().task_progress_size() != 4096) {
          return false;
        }
        for (const auto& t : running->model().task_progress()) {
          if (t.job().state() != tunefleet::v1::JOB_STATE_RUNNING) return false;
        }
        return true;
      },
      std::chrono::seconds(240)));
  const int64_t threads_model = Threads(pid);
  const int64_t rss_model = RssKb(pid);
  EXPECT_LE(threads_model, threads_start + kThreadSlack)
      << "threads: " << threads_start << " at the start, " << threads_model
      << " with a model job of 4,096 tasks";

  grpc::ClientContext cancel_context;
  tunefleet::v1::CancelJobRequest cancel;
  cancel.set_job_id(model);
  JobProgress cancelled;
  ASSERT_TRUE(
      fleet.Stub()->CancelJob(&cancel_context, cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), tunefleet::v1::JOB_STATE_CANCELLED);
  const auto list_start = std::chrono::steady_clock::now();
  ASSERT_TRUE(fleet.Job(job).has_value());  // ListJobs answers
  const double list_s = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - list_start)
                            .count();
  int64_t rss_after = 0;
  FleetHarness::WaitFor(
      [&] {
        rss_after = RssKb(pid);
        return rss_after <= rss_before * 11 / 10;
      },
      std::chrono::seconds(30));
  // AddressSanitizer's quarantine keeps freed memory: RSS cannot fall
  // back there (tests/support/sanitizers.h); the plain build checks it.
  if (!testing::kAddressSanitizer) {
    EXPECT_LE(rss_after, rss_before * 11 / 10)
        << "RSS " << rss_before << " kB before the model job, " << rss_model
        << " kB with it, " << rss_after << " kB after its cancel";
  }
  std::printf(
      "threads: %lld at the start, %lld with %d streams (server CPU %.1f%% "
      "of a core while they wait), %lld with the model "
      "job; RSS %lld kB before it, %lld kB with it, %lld kB after its "
      "cancel; SubmitModelJob %.1f s, ListJobs after the cancel %.3f s\n",
      static_cast<long long>(threads_start),
      static_cast<long long>(threads_streams), kStreams, idle_cpu,
      static_cast<long long>(threads_model), static_cast<long long>(rss_before),
      static_cast<long long>(rss_model), static_cast<long long>(rss_after),
      submit_s, list_s);
  // The streams still follow their job.
  EXPECT_TRUE(watchers.ended().empty());
}

TEST(ServerLimits, EachLimitRefusesWithResourceExhaustedNamingItsFlag) {
  FleetHarness fleet("server_limits_refuse");
  StartWithKnownKey(fleet, {"--max-active-jobs", "2", "--max-model-tasks", "3",
                            "--max-watch-streams", "4"});
  // Active jobs: two wait for an agent; a third is refused.
  const int64_t first =
      fleet.Submit(testing::SmallGemmJob(kLimitsKey, 5, 0, 1));
  const int64_t second =
      fleet.Submit(testing::SmallGemmJob(kLimitsKey, 5, 0, 2));
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  int64_t third = 0;
  grpc::Status s =
      fleet.SubmitJob(testing::SmallGemmJob(kLimitsKey, 5, 0, 3), &third);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("--max-active-jobs 2"));
  int64_t model = 0;
  s = SubmitModel(fleet, ManyTasks(2), &model);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("--max-active-jobs 2"));

  // Tasks per model job, whatever room there is.
  s = SubmitModel(fleet, ManyTasks(4), &model);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("--max-model-tasks 3"));

  // A cancelled job makes room.
  grpc::ClientContext context;
  tunefleet::v1::CancelJobRequest cancel;
  cancel.set_job_id(first);
  JobProgress cancelled;
  ASSERT_TRUE(fleet.Stub()->CancelJob(&context, cancel, &cancelled).ok());
  s = SubmitModel(fleet, ManyTasks(3), &model);
  EXPECT_TRUE(s.ok()) << s.error_message();

  // Streams per token: the reader's fifth is refused, the tuner's first is
  // not.
  Watchers reader(fleet.address(), fleet.reader_token());
  reader.Open(4, second);
  ASSERT_TRUE(FleetHarness::WaitFor([&] { return reader.first() == 4; },
                                    std::chrono::seconds(30)));
  Watchers fifth(fleet.address(), fleet.reader_token());
  fifth.Open(1, second);
  ASSERT_TRUE(FleetHarness::WaitFor([&] { return !fifth.ended().empty(); },
                                    std::chrono::seconds(30)));
  EXPECT_EQ(fifth.ended()[0].error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(fifth.ended()[0].error_message(),
              HasSubstr("--max-watch-streams 4"));
  Watchers tuner(fleet.address(), fleet.tuner_token());
  tuner.Open(1, second);
  EXPECT_TRUE(FleetHarness::WaitFor([&] { return tuner.first() == 1; },
                                    std::chrono::seconds(30)));
  // One of the reader's streams ends: room for another.
  reader.CancelAll();
  // The slots come free once the server has processed the cancellations
  // (asynchronously, later on a loaded host): a stream opened before that
  // is refused, so a refused one is opened again.
  bool opened = false;
  for (int attempt = 0; attempt < 20 && !opened; ++attempt) {
    Watchers again(fleet.address(), fleet.reader_token());
    again.Open(1, second);
    FleetHarness::WaitFor(
        [&] { return again.first() == 1 || !again.ended().empty(); },
        std::chrono::seconds(10));
    opened = again.first() == 1;
    if (!opened) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(opened);
}

}  // namespace
}  // namespace tunefleet
