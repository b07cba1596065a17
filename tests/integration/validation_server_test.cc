// Hostile input through a real server (gRPC on loopback, a real SQLite
// file): every SubmitJob field and the other calls' fields are refused with
// INVALID_ARGUMENT naming the field; an agent's malformed result is
// recorded as a RUNTIME_ERROR; oversized messages stop at the transport.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "server/server.h"
#include "store/store.h"
#include "tests/support/template_fixtures.h"
#include "tests/support/test_device.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::tunefleet::testing::SaxpySpecText;
using tunefleet::v1::SubmitJobRequest;

constexpr char kDeviceKey[] = "val-dev";

using ::tunefleet::testing::TestDevice;

class ValidationServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_path_ = ::testing::TempDir() + "/validation_" +
               std::to_string(getpid()) + ".db";
    std::filesystem::remove(db_path_);
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = db_path_;
    options.verbose = false;
    options.no_auth = true;  // authentication has its own tests
    auto server = Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_TRUE(server_->store().UpsertDevice(kDeviceKey, TestDevice()).ok());
    stub_ = tunefleet::v1::TuningService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  static void TearDownTestSuite() {
    stub_.reset();
    server_.reset();
    std::filesystem::remove(db_path_);
  }

  // A valid request: gemm 8x8x8 on the test device.
  static SubmitJobRequest Valid() {
    SubmitJobRequest r;
    *r.mutable_workload() = trial::WorkloadToProto(
        *templates::Workload::Parse("gemm", "M=8,N=8,K=8"));
    r.set_device_key(kDeviceKey);
    r.set_trials(4);
    r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
    return r;
  }

  static grpc::Status Submit(const SubmitJobRequest& r) {
    grpc::ClientContext context;
    tunefleet::v1::SubmitJobResponse out;
    return stub_->SubmitJob(&context, r, &out);
  }

  static std::string db_path_;
  static std::unique_ptr<Server> server_;
  static std::unique_ptr<tunefleet::v1::TuningService::Stub> stub_;
};

std::string ValidationServer::db_path_;
std::unique_ptr<Server> ValidationServer::server_;
std::unique_ptr<tunefleet::v1::TuningService::Stub> ValidationServer::stub_;

// Sets dim `name` of the request's workload (adding it when absent).
void SetDim(SubmitJobRequest& r, const std::string& name, int64_t value) {
  for (auto& d : *r.mutable_workload()->mutable_dims()) {
    if (d.name() == name) {
      d.set_value(value);
      return;
    }
  }
  auto* d = r.mutable_workload()->add_dims();
  d->set_name(name);
  d->set_value(value);
}

struct Refusal {
  const char* what;  // the case, for failure messages
  std::function<void(SubmitJobRequest&)> edit;
  const char* message;  // expected in the error, starting with the field
};

TEST_F(ValidationServer, EveryInvalidSubmitJobFieldIsRefusedByName) {
  const std::string long_name(200, 'a');
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Refusal> cases = {
      // Workload shapes.
      {"no workload", [](auto& r) { r.clear_workload(); }, "workload: missing"},
      {"dim 0", [](auto& r) { SetDim(r, "M", 0); },
       "workload: shape dim M must be between 1 and 2147483647, got 0"},
      {"negative dim", [](auto& r) { SetDim(r, "K", -4); },
       "workload: shape dim K must be between 1"},
      {"dim over int32", [](auto& r) { SetDim(r, "N", int64_t{1} << 31); },
       "workload: shape dim N must be between 1 and 2147483647"},
      {"dim at int64 max",
       [](auto& r) { SetDim(r, "N", std::numeric_limits<int64_t>::max()); },
       "workload: shape dim N must be between 1"},
      {"M*N*K overflows",
       [](auto& r) {
         for (const char* d : {"M", "N", "K"}) SetDim(r, d, (1 << 30) + 1);
       },
       "workload: shape of gemm is too large: the product of its dims M*N*K "
       "exceeds 2^53"},
      {"buffer over 16 GiB",
       [](auto& r) {
         SetDim(r, "M", 1 << 18);
         SetDim(r, "N", 1);
         SetDim(r, "K", 1 << 18);
       },
       "workload: buffer A of gemm M=262144 N=1 K=262144 fp32 has "
       "68719476736 elements; it needs >= 1 and at most 17179869184 bytes"},
      {"missing dim",
       [](auto& r) { r.mutable_workload()->mutable_dims()->RemoveLast(); },
       "workload: shape of gemm is missing dim K"},
      {"no dims", [](auto& r) { r.mutable_workload()->clear_dims(); },
       "workload.dims: no dims given"},
      {"dim twice",
       [](auto& r) {
         SetDim(r, "X", 1),
             r.mutable_workload()->mutable_dims(3)->set_name("M");
       },
       "workload.dims[3].name: dim M is given more than once"},
      {"too many dims",
       [](auto& r) {
         for (int i = 0; i < 40; ++i) SetDim(r, absl::StrCat("D", i), 1);
       },
       "workload.dims: 43 dims; at most 32"},
      {"unknown dim", [](auto& r) { SetDim(r, "Q", 3); },
       "workload: op gemm has no dim 'Q'"},
      {"empty dim name", [](auto& r) { SetDim(r, "", 3); },
       "workload.dims[3].name: must not be empty"},
      {"unknown op", [](auto& r) { r.mutable_workload()->set_op("conv9d"); },
       "workload: unknown op 'conv9d'"},
      {"op with SQL",
       [](auto& r) { r.mutable_workload()->set_op("gemm' OR '1'='1"); },
       "workload.op: 'gemm\\' OR \\'1\\'=\\'1' may hold only letters"},
      {"op too long", [&](auto& r) { r.mutable_workload()->set_op(long_name); },
       "workload.op: must be at most 128 characters, got 200"},
      {"bad dtype",
       [](auto& r) {
         r.mutable_workload()->set_dtype(static_cast<tunefleet::v1::Dtype>(9));
       },
       "workload.dtype: unknown value 9"},
      {"attribute of another op",
       [](auto& r) {
         auto* a = r.mutable_workload()->add_attrs();
         a->set_name("act");
         a->set_value("relu");
       },
       "workload: op gemm has no attribute 'act'"},
      {"attribute twice",
       [](auto& r) {
         for (int i = 0; i < 2; ++i) {
           auto* a = r.mutable_workload()->add_attrs();
           a->set_name("act");
           a->set_value("relu");
         }
       },
       "workload.attrs[1].name: attribute act is given more than once"},
      // Names.
      {"template unknown", [](auto& r) { r.set_template_name("nope"); },
       "template_name: template 'nope' does not run"},
      {"template name with a newline",
       [](auto& r) { r.set_template_name("gemm\ntiled"); },
       "template_name: 'gemm\\ntiled' may hold only"},
      {"device key with a slash",
       [](auto& r) { r.set_device_key("../etc/passwd"); },
       "device_key: '../etc/passwd' may hold only"},
      {"device key too long", [&](auto& r) { r.set_device_key(long_name); },
       "device_key: must be at most 128 characters"},
      {"device key never seen", [](auto& r) { r.set_device_key("never-seen"); },
       "never-seen"},
      {"strategy unknown",
       [](auto& r) {
         r.set_strategy(static_cast<tunefleet::v1::Strategy>(42));
       },
       "strategy: unknown value 42"},
      // Counts and limits.
      {"no trials", [](auto& r) { r.set_trials(0); },
       "trials: must be between 1 and 1000000, got 0"},
      {"too many trials", [](auto& r) { r.set_trials(1000001); },
       "trials: must be between 1 and 1000000, got 1000001"},
      {"early stop too large", [](auto& r) { r.set_early_stop(4000000000u); },
       "early_stop: must be at most 1000000"},
      {"priority too high", [](auto& r) { r.set_priority(1 << 30); },
       "priority: must be between -1000 and 1000"},
      {"priority too low", [](auto& r) { r.set_priority(-(1 << 30)); },
       "priority: must be between -1000 and 1000"},
      {"deadline past a year", [](auto& r) { r.set_deadline_s(4000000000u); },
       "deadline_s: must be at most 31536000"},
      // Timing policy.
      {"repeat", [](auto& r) { r.mutable_timing()->set_repeat(100000); },
       "timing: repeat must be <= 100, got 100000"},
      {"number", [](auto& r) { r.mutable_timing()->set_number(20000); },
       "timing: number must be <= 10000"},
      {"warmup", [](auto& r) { r.mutable_timing()->set_warmup(20000); },
       "timing: warmup must be <= 10000"},
      {"max_launches",
       [](auto& r) { r.mutable_timing()->set_max_launches(20000); },
       "timing: max_launches must be <= 10000"},
      {"min_repeat_ms negative",
       [](auto& r) { r.mutable_timing()->set_min_repeat_ms(-1); },
       "timing: min_repeat_ms must be within 0..60000 ms, got -1"},
      {"max_total_ms NaN",
       [&](auto& r) { r.mutable_timing()->set_max_total_ms(nan); },
       "timing: max_total_ms must be within 0..600000 ms, got nan"},
      {"cooldown_ms infinite",
       [](auto& r) {
         r.mutable_timing()->set_cooldown_ms(
             std::numeric_limits<double>::infinity());
       },
       "timing: cooldown_ms must be within 0..60000 ms, got inf"},
      {"timeout_ms", [](auto& r) { r.mutable_timing()->set_timeout_ms(1e12); },
       "timing: timeout_ms must be within 0..3600000 ms"},
      // Users' template specs: sizes and format here, content below.
      {"spec format",
       [](auto& r) {
         r.mutable_template_spec()->set_spec("name = 'x'");
         r.mutable_template_spec()->set_format("yaml");
         r.mutable_template_spec()->set_source("kernel void f() {}");
       },
       "template_spec.format: must be toml or json, got 'yaml'"},
      {"spec empty",
       [](auto& r) { r.mutable_template_spec()->set_format("toml"); },
       "template_spec.spec: must not be empty"},
      {"spec over 64 KiB",
       [](auto& r) {
         r.mutable_template_spec()->set_spec(std::string(70000, '#'));
         r.mutable_template_spec()->set_format("toml");
       },
       "template_spec.spec: 70000 bytes; at most 65536 allowed"},
      {"source over 1 MiB",
       [](auto& r) {
         r.mutable_template_spec()->set_spec(SaxpySpecText());
         r.mutable_template_spec()->set_format("toml");
         r.mutable_template_spec()->set_source(std::string(2 << 20, ' '));
       },
       "template_spec.source: 2097152 bytes; at most 1048576 allowed"},
      {"spec knob outside +-2^31",
       [](auto& r) {
         r.mutable_template_spec()->set_spec(absl::StrReplaceAll(
             SaxpySpecText(), {{"VW = [1, 2, 4]", "VW = [1, 2, 4294967296]"}}));
         r.mutable_template_spec()->set_format("toml");
         r.mutable_template_spec()->set_source("kernel void saxpy() {}");
       },
       "template_spec: template spec: knob VW: 4294967296 is outside "
       "+-2147483647"},
      {"spec knob name injecting build options",
       [](auto& r) {
         r.mutable_template_spec()->set_spec(absl::StrReplaceAll(
             SaxpySpecText(),
             {{"VW = [1, 2, 4]", "\"VW -cl-opt-disable\" = [1, 2, 4]"}}));
         r.mutable_template_spec()->set_format("toml");
         r.mutable_template_spec()->set_source("kernel void saxpy() {}");
       },
       "template_spec: template spec: knobs: 'VW -cl-opt-disable' is not an "
       "identifier"},
  };
  for (const Refusal& c : cases) {
    SubmitJobRequest r = Valid();
    c.edit(r);
    grpc::Status s = Submit(r);
    const grpc::StatusCode expected =
        std::string(c.what) == "device key never seen"
            ? grpc::StatusCode::NOT_FOUND
            : grpc::StatusCode::INVALID_ARGUMENT;
    EXPECT_EQ(s.error_code(), expected) << c.what << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.message)) << c.what;
  }
  // No refused request left a job row.
  auto jobs = server_->store().ListJobs(100);
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());
}

TEST_F(ValidationServer, AValidRequestIsAccepted) {
  SubmitJobRequest r = Valid();
  r.mutable_timing()->set_repeat(2);
  r.set_priority(-1000);
  r.set_deadline_s(3600);
  grpc::ClientContext context;
  tunefleet::v1::SubmitJobResponse out;
  grpc::Status s = stub_->SubmitJob(&context, r, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GE(out.job_id(), 1);
  EXPECT_EQ(out.device_key(), kDeviceKey);
  ASSERT_TRUE(server_->jobs().Cancel(out.job_id()).ok());
}

TEST_F(ValidationServer, AnAgentsMalformedResultIsRecordedAsRuntimeError) {
  SubmitJobRequest r = Valid();
  r.set_skip_reference(true);
  r.set_trials(2);
  grpc::ClientContext context;
  tunefleet::v1::SubmitJobResponse out;
  ASSERT_TRUE(stub_->SubmitJob(&context, r, &out).ok());
  // No agent is connected, so the job proposes nothing yet: a trial row
  // written here stands for one an agent was leased.
  auto trials = server_->store().InsertTrials(out.job_id(), {{0, "MWG=16"}});
  ASSERT_TRUE(trials.ok()) << trials.status();
  // "OK" with a NaN time, as a broken or hostile agent might send it.
  tunefleet::v1::Measurement bad;
  bad.set_error(tunefleet::v1::Measurement::OK);
  bad.add_times_ns(std::numeric_limits<double>::quiet_NaN());
  // Results are stored by the server's group commit: wait for this one.
  absl::Notification stored;
  server_->ledger().Commit(out.job_id(), trials->front(), bad, {},
                           [&stored](absl::Status) { stored.Notify(); });
  ASSERT_TRUE(stored.WaitForNotificationWithTimeout(absl::Seconds(60)));
  store::RecordFilter f;
  f.job_id = out.job_id();
  auto records = server_->store().QueryRecords(f);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].error(), tunefleet::v1::Measurement::RUNTIME_ERROR);
  EXPECT_EQ((*records)[0].time_ns(), 0);
  ASSERT_TRUE(server_->jobs().Cancel(out.job_id()).ok());
}

TEST_F(ValidationServer, ASpecTemplateWithBadContentIsRefusedByField) {
  const std::vector<std::pair<std::string, const char*>> specs = {
      {absl::StrReplaceAll(SaxpySpecText(),
                           {{"name = \"saxpy_val\"", "name = \"saxpy val\""}}),
       "template_spec: template spec: name: 'saxpy val' is not an identifier"},
      {absl::StrReplaceAll(
           SaxpySpecText(),
           {{"flops = \"2 * N\"",
             absl::StrCat("flops = \"", std::string(2000, 'N'), "\"")}}),
       "flops: expression of 2000 characters; at most 1024"},
      {absl::StrReplaceAll(SaxpySpecText(), {{"name = \"y\"", "name = \"x\""}}),
       "template spec: buffer x is repeated"},
      {absl::StrReplaceAll(SaxpySpecText(),
                           {{"WG = [16, 32, 64]", "N = [16, 32, 64]"}}),
       "knob N: the name is taken by a dim or device limit"},
      {absl::StrCat("rtol = nan\n", SaxpySpecText()), "rtol: "},
      {absl::StrCat("version = 99999999999\n", SaxpySpecText()),
       "version: 99999999999 is outside +-1000000"},
  };
  for (const auto& [text, message] : specs) {
    SubmitJobRequest r = Valid();
    r.mutable_template_spec()->set_spec(text);
    r.mutable_template_spec()->set_format("toml");
    r.mutable_template_spec()->set_source("kernel void saxpy() {}");
    r.clear_workload();
    *r.mutable_workload()->mutable_op() = "saxpy_val";
    SetDim(r, "N", 1000);
    grpc::Status s = Submit(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << message << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(message));
  }
}

TEST_F(ValidationServer, OversizedMessagesAreRefusedByTheTransport) {
  SubmitJobRequest r = Valid();
  r.mutable_template_spec()->set_spec(SaxpySpecText());
  r.mutable_template_spec()->set_format("toml");
  // Past the server's 64 MiB (server/server.cc: a model run's plan and
  // weights travel in one message).
  r.mutable_template_spec()->set_source(std::string(65 << 20, ' '));
  grpc::Status s = Submit(r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
}

TEST_F(ValidationServer, OtherCallsRefuseBadFieldsByName) {
  {
    grpc::ClientContext context;
    tunefleet::v1::WatchJobRequest w;
    w.set_job_id(0);
    auto reader = stub_->WatchJob(&context, w);
    tunefleet::v1::JobProgress p;
    EXPECT_FALSE(reader->Read(&p));
    grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "job_id: must be >= 1, got 0");
  }
  // Unary calls, each on its own context.
  grpc::ClientContext cancel_context, get_context, list_context;
  tunefleet::v1::CancelJobRequest negative;
  negative.set_job_id(-5);
  tunefleet::v1::ListJobsRequest too_many;
  too_many.set_page_size(validation::kMaxListedJobs + 1);
  tunefleet::v1::JobProgress p;
  tunefleet::v1::ListJobsResponse jobs;
  const std::pair<grpc::Status, const char*> refused[] = {
      {stub_->CancelJob(&cancel_context, negative, &p),
       "job_id: must be >= 1, got -5"},
      {stub_->GetJob(&get_context, tunefleet::v1::GetJobRequest(), &p),
       "job_id: must be >= 1, got 0"},
      {stub_->ListJobs(&list_context, too_many, &jobs),
       "page_size: at most 10000, got 10001"},
  };
  for (const auto& [s, message] : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_EQ(s.error_message(), message);
  }
  {
    grpc::ClientContext context;
    tunefleet::v1::CancelJobRequest c;
    c.set_job_id(987654);
    EXPECT_EQ(stub_->CancelJob(&context, c, &p).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  const std::vector<std::pair<
      std::function<void(tunefleet::v1::QueryRecordsRequest&)>, const char*>>
      queries = {
          {[](auto& q) { q.set_op("gemm' OR 1=1 --"); }, "op: 'gemm\\' OR"},
          {[](auto& q) { q.set_op(std::string(129, 'g')); },
           "op: must be at most 128 characters, got 129"},
          {[](auto& q) { q.set_device_key("a b"); }, "device_key: 'a b'"},
          {[](auto& q) { q.set_job_id(-1); }, "job_id: must be >= 0, got -1"},
          {[](auto& q) { q.set_page_size(10001); },
           "page_size: at most 10000, got 10001"},
          {[](auto& q) { q.set_page_token("bm90IGEgdG9rZW4"); },
           "page_token: 'bm90IGEgdG9rZW4' is not a next_page_token"},
      };
  for (const auto& [edit, message] : queries) {
    grpc::ClientContext context;
    tunefleet::v1::QueryRecordsRequest q;
    edit(q);
    tunefleet::v1::QueryRecordsResponse out;
    grpc::Status s = stub_->QueryRecords(&context, q, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_THAT(s.error_message(), StartsWith(message));
  }
}

}  // namespace
}  // namespace tunefleet::server
