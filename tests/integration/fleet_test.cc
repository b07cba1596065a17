// A real tunefleet-server and a real agent on PoCL, talking gRPC on
// loopback, with a real SQLite file.
#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "client/channel.h"
#include "contract/device_info_revision.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "search_space/table.h"
#include "search_space/task_features.h"
#include "store/store.h"
#include "store/table_export.h"
#include "tests/support/agent_hello.h"
#include "tests/support/in_process_fleet.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/agent.grpc.pb.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet {
namespace {

using tunefleet::v1::JobProgress;
using tunefleet::v1::Measurement;

// The registry's GEMM template plus a FAULT knob: 1 breaks compilation, 2
// makes every result wrong by one. For tests of error handling through the
// whole path.
class FaultyGemm : public templates::KernelTemplate {
 public:
  explicit FaultyGemm(const templates::KernelTemplate& gemm)
      : gemm_(gemm), knobs_(gemm.knobs()) {
    // Narrow the space so the faults come up within a few trials.
    for (auto& k : knobs_) {
      if (k.name == "MWG" || k.name == "NWG") k.values = {16, 32};
      if (k.name == "KWG") k.values = {8};
    }
    knobs_.push_back({"FAULT", {0, 1, 2}, false});
    source_ = absl::StrCat(
        "#if FAULT == 1\n#error deliberate compile error\n#endif\n"
        "#if FAULT == 2\n#define mad(a, b, c) ((a) * (b) + (c) + 1.0f)\n"
        "#endif\n",
        gemm.source());
  }
  absl::string_view name() const override { return "gemm_faulty"; }
  int version() const override { return gemm_.version(); }
  absl::string_view op() const override { return gemm_.op(); }
  const std::vector<templates::Knob>& knobs() const override { return knobs_; }
  absl::string_view source() const override { return source_; }
  absl::Status CheckWorkload(const templates::Workload& w,
                             const templates::DeviceLimits& l) const override {
    return gemm_.CheckWorkload(w, l);
  }
  absl::Status CheckConfig(const templates::KnobValues& config,
                           const templates::Workload& w,
                           const templates::DeviceLimits& l) const override {
    if (config.size() != knobs_.size()) {
      return absl::InvalidArgumentError("config has the wrong size");
    }
    return gemm_.CheckConfig(GemmConfig(config), w, l);
  }
  std::vector<templates::BufferDesc> Buffers(
      const templates::Workload& w) const override {
    return gemm_.Buffers(w);
  }
  templates::LaunchDesc Launch(const templates::KnobValues& config,
                               const templates::Workload& w) const override {
    templates::LaunchDesc l = gemm_.Launch(GemmConfig(config), w);
    l.source = source_;
    l.build_options += absl::StrCat(" -DFAULT=", config.back());
    return l;
  }
  templates::LaunchDesc ReferenceLaunch(
      const templates::Workload& w) const override {
    return gemm_.ReferenceLaunch(w);
  }
  double Flops(const templates::Workload& w) const override {
    return gemm_.Flops(w);
  }
  double Bytes(const templates::Workload& w) const override {
    return gemm_.Bytes(w);
  }
  std::vector<templates::Feature> DerivedFeatures(
      const templates::KnobValues& config, const templates::Workload& w,
      const templates::DeviceLimits& l) const override {
    return gemm_.DerivedFeatures(GemmConfig(config), w, l);
  }

 private:
  // The config without FAULT.
  static templates::KnobValues GemmConfig(const templates::KnobValues& c) {
    return templates::KnobValues(c.begin(), c.end() - 1);
  }

  const templates::KernelTemplate& gemm_;
  std::vector<templates::Knob> knobs_;
  std::string source_;
};

class Fleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    (void)templates::RegisterTemplate(std::make_unique<FaultyGemm>(
        *templates::FindTemplate("gemm", "gemm_tiled").value()));
    fleet_ = std::make_unique<testing::InProcessFleet>("integration");
    ASSERT_TRUE(fleet_->StartServer().ok());
    auto backend = testing::PoclBackend();
    ASSERT_TRUE(backend.ok()) << backend.status();
    const absl::Status agent =
        fleet_->StartAgent("pocl-test", *std::move(backend));
    ASSERT_TRUE(agent.ok()) << agent;
    stub_ = tunefleet::v1::TuningService::NewStub(
        client::Dial({fleet_->server().address()}));
  }

  static void TearDownTestSuite() {
    stub_.reset();
    fleet_.reset();
  }

  static tunefleet::v1::SubmitJobRequest Request(const std::string& shape,
                                                 uint32_t trials) {
    tunefleet::v1::SubmitJobRequest r;
    *r.mutable_workload() =
        trial::WorkloadToProto(*templates::Workload::Parse("gemm", shape));
    r.set_trials(trials);
    r.set_strategy(tunefleet::v1::STRATEGY_XGB);
    r.set_seed(5);
    return r;
  }

  static grpc::Status Submit(const tunefleet::v1::SubmitJobRequest& r,
                             tunefleet::v1::SubmitJobResponse* out) {
    grpc::ClientContext context;
    return stub_->SubmitJob(&context, r, out);
  }

  // Watches a job to its end; returns the last progress.
  static JobProgress Watch(int64_t job_id) {
    JobProgress last;
    EXPECT_TRUE(testing::WatchJobToEnd(*stub_, job_id, &last).ok());
    return last;
  }

  static std::vector<tunefleet::v1::TuningRecord> Records(int64_t job_id,
                                                          bool best_only) {
    store::RecordFilter f;
    f.job_id = job_id;
    f.best_only = best_only;
    auto records = fleet_->server().store().QueryRecords(f);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<tunefleet::v1::TuningRecord>{};
  }

  static inline std::unique_ptr<testing::InProcessFleet> fleet_;
  static inline std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
};

TEST_F(Fleet, FortyTrialJobStoresEveryTrialAndAVerifiedBest) {
  tunefleet::v1::SubmitJobResponse submitted;
  ASSERT_TRUE(Submit(Request("M=96,N=80,K=72", 40), &submitted).ok());
  EXPECT_EQ(submitted.device_key(), "pocl-test");
  EXPECT_GT(submitted.space_size(), 40u);
  JobProgress last = Watch(submitted.job_id());
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), 40u);
  ASSERT_TRUE(last.has_best());
  EXPECT_GT(last.best().gflops(), 0);
  EXPECT_GT(last.reference_time_ns(), 0);

  std::vector<tunefleet::v1::TuningRecord> all =
      Records(submitted.job_id(), false);
  ASSERT_EQ(all.size(), 40u);
  std::set<std::string> configs;
  for (const auto& r : all) {
    EXPECT_NE(r.error(), Measurement::ERROR_UNSPECIFIED);
    configs.insert(cli::ConfigText(r.config()));
  }
  EXPECT_EQ(configs.size(), 40u) << "a config was measured twice";
  std::vector<tunefleet::v1::TuningRecord> best =
      Records(submitted.job_id(), true);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].error(), Measurement::OK);  // OK means it verified
  EXPECT_EQ(best[0].trial_id(), last.best().trial_id());
  EXPECT_DOUBLE_EQ(best[0].time_ns(), last.best().time_ns());
  for (const auto& r : all) {
    if (r.error() == Measurement::OK) {
      EXPECT_GE(r.time_ns(), best[0].time_ns());
    }
  }

  auto job = fleet_->server().store().GetJob(submitted.job_id());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, tunefleet::v1::JOB_STATE_DONE);
  EXPECT_GT(job->reference_ns, best[0].time_ns())
      << "the tuned kernel should beat the naive reference";
}

TEST_F(Fleet, InvalidRequestsAreRefusedAndWriteNothing) {
  auto jobs_before = fleet_->server().store().QueryRecords({});
  ASSERT_TRUE(jobs_before.ok());
  struct Case {
    std::function<void(tunefleet::v1::SubmitJobRequest&)> edit;
    grpc::StatusCode code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.mutable_workload()->mutable_dims(0)->set_value(0); },
       grpc::StatusCode::INVALID_ARGUMENT, "dim M must be between 1"},
      {[](auto& r) { r.mutable_workload()->mutable_dims(2)->set_value(-4); },
       grpc::StatusCode::INVALID_ARGUMENT, "dim K must be between 1"},
      {[](auto& r) { r.set_trials(0); }, grpc::StatusCode::INVALID_ARGUMENT,
       "trials: must be between 1"},
      {[](auto& r) {
         r.set_strategy(static_cast<tunefleet::v1::Strategy>(42));
       },
       grpc::StatusCode::INVALID_ARGUMENT, "strategy: unknown value 42"},
      {[](auto& r) { r.set_template_name("nope"); },
       grpc::StatusCode::INVALID_ARGUMENT, "template_name"},
      {[](auto& r) { r.set_device_key("never-seen"); },
       grpc::StatusCode::NOT_FOUND, "never-seen"},
      {[](auto& r) { r.mutable_workload()->set_op("conv9d"); },
       grpc::StatusCode::INVALID_ARGUMENT, "unknown op 'conv9d'"},
      {[](auto& r) { r.mutable_timing()->set_repeat(100000); },
       grpc::StatusCode::INVALID_ARGUMENT, "timing: repeat must be"},
      {[](auto& r) { r.mutable_timing()->set_min_repeat_ms(-1); },
       grpc::StatusCode::INVALID_ARGUMENT, "timing: min_repeat_ms"},
  };
  for (const Case& c : cases) {
    tunefleet::v1::SubmitJobRequest r = Request("M=8,N=8,K=8", 5);
    c.edit(r);
    tunefleet::v1::SubmitJobResponse out;
    grpc::Status s = Submit(r, &out);
    EXPECT_EQ(s.error_code(), c.code) << c.message << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.message), std::string::npos)
        << s.error_message();
  }
  // No job row was created by any refused request.
  tunefleet::v1::SubmitJobResponse probe;
  ASSERT_TRUE(Submit(Request("M=8,N=8,K=8", 1), &probe).ok());
  Watch(probe.job_id());
  for (int64_t id = 1; id < probe.job_id(); ++id) {
    auto job = fleet_->server().store().GetJob(id);
    ASSERT_TRUE(job.ok()) << "job ids have gaps: " << id;
    EXPECT_NE(job->workload, "gemm M=0 N=8 K=8 fp32");
  }
}

TEST_F(Fleet, CompileErrorsAndWrongAnswersAreRecordedNotFatal) {
  tunefleet::v1::SubmitJobRequest r = Request("M=33,N=17,K=9", 24);
  r.set_template_name("gemm_faulty");
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  tunefleet::v1::SubmitJobResponse submitted;
  grpc::Status submit = Submit(r, &submitted);
  ASSERT_TRUE(submit.ok()) << submit.error_message();
  JobProgress last = Watch(submitted.job_id());
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE) << last.message();
  EXPECT_EQ(last.trials_done(), 24u);
  EXPECT_GT(last.errors().at("COMPILE_ERROR"), 0u);
  EXPECT_GT(last.errors().at("WRONG_ANSWER"), 0u);
  EXPECT_GT(last.errors().at("OK"), 0u);
  for (const auto& rec : Records(submitted.job_id(), false)) {
    // FAULT is the last knob.
    const int64_t fault =
        rec.config().knobs(rec.config().knobs_size() - 1).value();
    const Measurement::Error expect =
        fault == 0 ? Measurement::OK
                   : (fault == 1 ? Measurement::COMPILE_ERROR
                                 : Measurement::WRONG_ANSWER);
    EXPECT_EQ(rec.error(), expect) << cli::ConfigText(rec.config());
  }
  // The best can only be a correct config.
  auto best = Records(submitted.job_id(), true);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config().knobs(best[0].config().knobs_size() - 1).value(),
            0);
  // And the agent still serves: a normal job right after runs cleanly.
  tunefleet::v1::SubmitJobResponse after;
  ASSERT_TRUE(Submit(Request("M=16,N=16,K=16", 3), &after).ok());
  JobProgress next = Watch(after.job_id());
  EXPECT_EQ(next.state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_EQ(next.errors().at("OK"), 3u);
}

TEST_F(Fleet, EarlyStopEndsAJobThatStopsImproving) {
  tunefleet::v1::SubmitJobRequest r = Request("M=24,N=24,K=24", 200);
  r.set_early_stop(6);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_skip_reference(true);
  tunefleet::v1::SubmitJobResponse submitted;
  ASSERT_TRUE(Submit(r, &submitted).ok());
  JobProgress last = Watch(submitted.job_id());
  EXPECT_EQ(last.state(), tunefleet::v1::JOB_STATE_DONE);
  EXPECT_LT(last.trials_done(), 200u);
  EXPECT_NE(last.message().find("stopped early"), std::string::npos)
      << last.message();
  auto job = fleet_->server().store().GetJob(submitted.job_id());
  ASSERT_TRUE(job.ok());
  EXPECT_NE(job->message.find("stopped early"), std::string::npos);
  // Every trial written is accounted for, none left pending.
  auto states = fleet_->server().store().TrialStates(submitted.job_id());
  ASSERT_TRUE(states.ok());
  EXPECT_EQ(states->count(tunefleet::v1::TRIAL_STATE_PENDING), 0u);
  EXPECT_EQ(states->count(tunefleet::v1::TRIAL_STATE_LEASED), 0u);
}

TEST_F(Fleet, XgbJobsStartFromEarlierRecordsUnlessTold) {
  // Earlier records of the template exist once any job ran.
  tunefleet::v1::SubmitJobResponse first;
  ASSERT_TRUE(Submit(Request("M=20,N=36,K=12", 6), &first).ok());
  Watch(first.job_id());
  tunefleet::v1::SubmitJobResponse warm;
  ASSERT_TRUE(Submit(Request("M=28,N=20,K=16", 4), &warm).ok());
  JobProgress warm_last = Watch(warm.job_id());
  EXPECT_GE(warm_last.history_rows(), 6u);
  tunefleet::v1::SubmitJobRequest cold_request = Request("M=28,N=20,K=16", 2);
  cold_request.set_no_transfer(true);
  tunefleet::v1::SubmitJobResponse cold;
  ASSERT_TRUE(Submit(cold_request, &cold).ok());
  EXPECT_EQ(Watch(cold.job_id()).history_rows(), 0u);
}

TEST_F(Fleet, ExportedJobTableLoadsForSimulation) {
  tunefleet::v1::SubmitJobRequest r = Request("M=40,N=24,K=8", 8);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  tunefleet::v1::SubmitJobResponse submitted;
  ASSERT_TRUE(Submit(r, &submitted).ok());
  Watch(submitted.job_id());
  auto csv =
      store::ExportJobTable(fleet_->server().store(), submitted.job_id());
  ASSERT_TRUE(csv.ok()) << csv.status();
  auto table = search_space::ParseTable(*csv, "export");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->rows.size(), 8u);
  EXPECT_EQ(table->metadata.at("template"), "gemm_tiled");
  EXPECT_EQ(table->metadata.at("workload"), "gemm M=40 N=24 K=8 fp32");
  // It names its task, so simulations compute the task's features.
  auto task = search_space::TableTaskFeatures(*table);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_GT(task->Names().size(), table->knobs.size());
  EXPECT_EQ(
      store::ExportJobTable(fleet_->server().store(), 99999).status().code(),
      absl::StatusCode::kNotFound);
}

TEST_F(Fleet, ListDevicesShowsTheConnectedAgent) {
  grpc::ClientContext context;
  tunefleet::v1::ListDevicesResponse devices;
  ASSERT_TRUE(stub_->ListDevices(&context, {}, &devices).ok());
  ASSERT_EQ(devices.devices_size(), 1);
  EXPECT_EQ(devices.devices(0).device_key(), "pocl-test");
  EXPECT_EQ(devices.devices(0).connected_agents(), 1u);
  EXPECT_GT(devices.devices(0).device().max_work_group_size(), 0u);
}

// Connects to the agent service as an agent of `key` with `device`; the
// status the stream ends with (OK once welcomed and closed by us).
grpc::Status HelloAs(const std::string& address, const std::string& key,
                     const tunefleet::v1::DeviceInfo& device) {
  auto stub = tunefleet::v1::AgentService::NewStub(client::Dial({address}));
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);
  // As this build's agents: the whole report is compared.
  EXPECT_TRUE(stream->Write(testing::AgentHello(
      key, device, "hello-test", contract::kDeviceInfoRevision)));
  tunefleet::v1::ServerMessage reply;
  if (stream->Read(&reply)) {
    EXPECT_TRUE(reply.has_welcome());
    stream->WritesDone();
  }
  return stream->Finish();
}

// A key names interchangeable agents: one whose device differs from the
// connected agent's (here in compute units, or in image support) is
// refused with the difference named, and the key's stored device stays the
// connected agent's; the same device under the key, or the other device
// under its own key, is welcomed.
TEST_F(Fleet, AnAgentWithADifferentDeviceIsRefusedTheKey) {
  auto stored = fleet_->server().store().GetDevice("pocl-test");
  ASSERT_TRUE(stored.ok()) << stored.status();
  tunefleet::v1::DeviceInfo other = *stored;
  other.set_compute_units(stored->compute_units() + 1);
  grpc::Status refused =
      HelloAs(fleet_->server().address(), "pocl-test", other);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(
      refused.error_message(),
      ::testing::HasSubstr(absl::StrCat("compute_units ", other.compute_units(),
                                        ", not ", stored->compute_units())));
  EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("own --key"));
  other = *stored;
  other.set_image_support(!stored->image_support());
  EXPECT_THAT(
      HelloAs(fleet_->server().address(), "pocl-test", other).error_message(),
      ::testing::HasSubstr("image_support"));

  auto after = fleet_->server().store().GetDevice("pocl-test");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->compute_units(), stored->compute_units());
  EXPECT_EQ(after->image_support(), stored->image_support());

  EXPECT_TRUE(HelloAs(fleet_->server().address(), "pocl-test", *stored).ok());
  EXPECT_TRUE(
      HelloAs(fleet_->server().address(), "pocl-test-other", other).ok());
}

}  // namespace
}  // namespace tunefleet
