// Issue 34, as an attacker with each role's token tried it, against real
// processes (tunefleet-server, tunefleet-agent on PoCL, the tunefleet CLI)
// on loopback: one test per finding. Each fails on the code before the
// fix (run it against an older build with TUNEFLEET_TEST_BINARY_DIR).
//  1. A user template's #include of a file on the agent host leaks no byte
//     of it: neither through the server nor sent to the agent directly.
//  2. A deep TOML spec is refused before it is parsed.
//  6. Names with control characters are refused; stored ones are printed
//     escaped.
//  7. Refused submissions register no template.
//  8. Files holding fleet data are written 0600.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/process.h"
#include "tests/support/sanitizers.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A token no file of the test holds by chance.
std::string RandomToken() {
  std::random_device rd;
  return absl::StrCat("PLANTED_", rd(), "_", rd(), "_", rd());
}

// A file with `token` in it, outside every directory the fleet uses (as a
// token file on the agent's host would be).
class PlantedFile {
 public:
  PlantedFile() : token_(RandomToken()) {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("tf_planted_", getpid());
    std::filesystem::create_directories(dir_);
    std::ofstream(path()) << token_ << " planted_value;\n";
  }
  ~PlantedFile() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "secret.h").string(); }
  std::string dir() const { return dir_.string(); }
  const std::string& token() const { return token_; }

 private:
  std::string token_;
  std::filesystem::path dir_;
};

// The saxpy template of tests/data/templates as a job carries it, with
// `name` as the template's name, `op` as its op and `source` (default:
// saxpy.cl) as its OpenCL source.
tunefleet::v1::TemplateSpec SaxpySpec(const std::string& name,
                                      const std::string& op,
                                      const std::string& source = "") {
  tunefleet::v1::TemplateSpec spec;
  std::string text = ReadAll(SourceDir() + "/tests/data/templates/saxpy.toml");
  text = absl::StrReplaceAll(
      text, {{"name = \"saxpy_vec\"", absl::StrCat("name = \"", name, "\"")},
             {"op = \"saxpy\"", absl::StrCat("op = \"", op, "\"")}});
  spec.set_spec(text);
  spec.set_format("toml");
  spec.set_source(source.empty()
                      ? ReadAll(SourceDir() + "/tests/data/templates/saxpy.cl")
                      : source);
  return spec;
}

tunefleet::v1::SubmitJobRequest SaxpyJob(const std::string& key,
                                         const std::string& op,
                                         tunefleet::v1::TemplateSpec spec) {
  tunefleet::v1::SubmitJobRequest r;
  r.mutable_workload()->set_op(op);
  auto* dim = r.mutable_workload()->add_dims();
  dim->set_name("N");
  dim->set_value(256);
  r.set_device_key(key);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_trials(2);
  r.set_skip_reference(true);
  r.set_no_transfer(true);
  *r.mutable_timing() = QuickTiming();
  *r.mutable_template_spec() = std::move(spec);
  return r;
}

// Every record the server holds, as text, read with the reader token.
std::string AllRecordsText(const FleetHarness& fleet) {
  auto stub = fleet.StubAs<tunefleet::v1::TuningService>(fleet.reader_token());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  tunefleet::v1::QueryRecordsRequest request;
  request.set_page_size(10000);
  tunefleet::v1::QueryRecordsResponse response;
  const grpc::Status s = stub->QueryRecords(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response.DebugString();
}

// The server's resident memory, bytes (VmRSS of /proc/<pid>/status).
int64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;
    }
  }
  return -1;
}

// --- 1. An include of a planted file ------------------------------------

TEST(Security, AUserTemplatesIncludeReadsNoFileOfTheAgentHost) {
  PlantedFile planted;
  FleetHarness fleet("sec_include");
  ASSERT_TRUE(fleet.StartFleet(1, "sec"));
  const std::string source =
      absl::StrCat("#include \"", planted.path(), "\"\n",
                   ReadAll(SourceDir() + "/tests/data/templates/saxpy.cl"));
  // The same include, hidden from a naive look by a line splice and a
  // comment before the directive's name.
  const std::string hidden =
      absl::StrCat("#/* */ inc\\\nlude \"", planted.path(), "\"\n",
                   ReadAll(SourceDir() + "/tests/data/templates/saxpy.cl"));
  int i = 0;
  for (const std::string& text : {source, hidden}) {
    const std::string op = absl::StrCat("sec_inc", i++);
    int64_t job_id = 0;
    const grpc::Status s = fleet.SubmitJob(
        SaxpyJob("sec", op, SaxpySpec(op + "_t", op, text)), &job_id);
    if (s.ok()) {  // (before the fix: the job ran, its trials failed)
      ASSERT_TRUE(fleet.AwaitEnd(job_id, std::chrono::seconds(120)));
    }
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(),
                HasSubstr("template_spec.source: line 1: #include is not "
                          "allowed"));
    EXPECT_THAT(s.error_message(), Not(HasSubstr(planted.token())));
  }
  // No byte of it anywhere a reader can see.
  EXPECT_THAT(AllRecordsText(fleet), Not(HasSubstr(planted.token())));
  for (const std::string& file :
       {fleet.db_path(), fleet.db_path() + "-wal", fleet.dir() + "/server.log",
        fleet.agent_log(0)}) {
    EXPECT_THAT(ReadAll(file), Not(HasSubstr(planted.token()))) << file;
  }
}

// A server that hands the agent what it is told to, as a hostile or
// broken server would: the agent is the trust boundary.
class HostileAgentService final : public tunefleet::v1::AgentService::Service {
 public:
  explicit HostileAgentService(std::vector<tunefleet::v1::MeasureRequest> r)
      : requests_(std::move(r)) {}

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<tunefleet::v1::ServerMessage,
                               tunefleet::v1::AgentMessage>* stream) override {
    tunefleet::v1::AgentMessage in;
    if (!stream->Read(&in)) return grpc::Status::OK;
    tunefleet::v1::ServerMessage out;
    out.mutable_welcome()->set_agent_id("hostile-1");
    stream->Write(out);
    out.Clear();
    for (const auto& r : requests_) *out.mutable_batch()->add_requests() = r;
    stream->Write(out);
    while (stream->Read(&in)) {
      absl::MutexLock lock(&mu_);
      if (in.has_measurement()) results_.push_back(in.measurement());
      for (const auto& m : in.measurements().measurements()) {
        results_.push_back(m);
      }
      if (results_.size() >= requests_.size()) break;
    }
    return grpc::Status::OK;
  }

  std::vector<tunefleet::v1::Measurement> results() {
    absl::MutexLock lock(&mu_);
    return results_;
  }

 private:
  const std::vector<tunefleet::v1::MeasureRequest> requests_;
  absl::Mutex mu_;
  std::vector<tunefleet::v1::Measurement> results_ ABSL_GUARDED_BY(mu_);
};

TEST(Security, TheAgentRefusesIncludesAndFileOptionsFromAnyServer) {
  PlantedFile planted;
  auto tmpl = templates::RegisterSpecFile(SourceDir() +
                                          "/tests/data/templates/saxpy.toml");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  auto workload = templates::Workload::Parse("saxpy", "N=256");
  ASSERT_TRUE(workload.ok());
  templates::KnobValues config;
  for (const templates::Knob& k : (*tmpl)->knobs()) {
    config.push_back(k.values.front());
  }
  std::vector<tunefleet::v1::MeasureRequest> requests;
  auto request = [&](int64_t id, const std::string& prefix,
                     const std::string& options, const std::string& body) {
    tunefleet::v1::MeasureRequest r = trial::BuildMeasureRequest(
        **tmpl, *workload, config, id, QuickTiming());
    auto* k = r.mutable_kernel();
    k->set_source(absl::StrCat(prefix, body.empty() ? k->source() : body));
    k->clear_source_hash();
    k->set_build_options(absl::StrCat(k->build_options(), options));
    requests.push_back(r);
  };
  const std::string undeclared =
      "__kernel void saxpy(const int N, const float a, __global const float* "
      "x,\n    __global const float* z, __global float* y) {\n  y[0] = "
      "not_declared_here;\n}\n";
  request(1, absl::StrCat("#include \"", planted.path(), "\"\n"), "", "");
  request(2, "%:include \"secret.h\"\n", absl::StrCat(" -I", planted.dir()),
          "");
  request(3, "", absl::StrCat(" -include ", planted.path()), "");
  request(4, "", "", undeclared);  // a plain compile error: its log, scrubbed

  HostileAgentService service(requests);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server != nullptr && port > 0);
  const std::string log = ::testing::TempDir() + "/hostile_agent.log";
  std::filesystem::remove(log);
  {
    Process agent({BinaryDir() + "/device_agent/tunefleet-agent", "--server",
                   absl::StrCat("127.0.0.1:", port), "--key", "hostile"},
                  log);
    ASSERT_TRUE(FleetHarness::WaitFor(
        [&] { return service.results().size() >= requests.size(); },
        std::chrono::seconds(120)));
  }
  server->Shutdown();
  std::vector<tunefleet::v1::Measurement> results = service.results();
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
    return a.trial_id() < b.trial_id();
  });
  ASSERT_EQ(results.size(), 4u);
  for (const auto& m : results) {
    std::printf("[hostile server] trial %lld: %s\n%s\n",
                static_cast<long long>(m.trial_id()),
                tunefleet::v1::Measurement::Error_Name(m.error()).c_str(),
                m.error_message().c_str());
    SCOPED_TRACE(absl::StrCat("trial ", m.trial_id(), ": ", m.error_message()));
    EXPECT_EQ(m.error(), tunefleet::v1::Measurement::COMPILE_ERROR);
    EXPECT_THAT(m.error_message(), Not(HasSubstr(planted.token())));
    EXPECT_THAT(m.error_message(), Not(HasSubstr(planted.dir())));
  }
  EXPECT_THAT(results[0].error_message(),
              HasSubstr("kernel source refused: line 1: #include is not "
                        "allowed"));
  EXPECT_THAT(results[1].error_message(), HasSubstr("#include is not allowed"));
  EXPECT_THAT(results[2].error_message(),
              HasSubstr("build option '-include' is not allowed"));
  // The compiler's own words about the request's text stay; the agent
  // host's paths go.
  EXPECT_THAT(results[3].error_message(), HasSubstr("not_declared_here"));
  EXPECT_THAT(results[3].error_message(), Not(HasSubstr("/.cache/")));
  EXPECT_THAT(ReadAll(log), Not(HasSubstr(planted.token())));
}

// --- 2. A deep TOML spec ---------------------------------------------------

TEST(Security, ADeepTomlSpecIsRefusedBeforeItIsParsed) {
  FleetHarness fleet("sec_toml");
  ASSERT_TRUE(fleet.StartServer());
  // 20,000 segments of a dotted key: 40 KB, under the 64 KiB spec limit.
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += i == 0 ? "a" : ".a";
  deep += " = 1\n";
  ASSERT_LT(deep.size(), 64u << 10);
  tunefleet::v1::TemplateSpec spec = SaxpySpec("deep_t", "deep_op");
  spec.set_spec(deep + spec.spec());
  tunefleet::v1::SubmitJobRequest r = SaxpyJob("", "deep_op", std::move(spec));
  const pid_t pid = fleet.server().pid();
  const int64_t before = RssBytes(pid);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  tunefleet::v1::SubmitJobResponse response;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status s = fleet.Stub()->SubmitJob(&context, r, &response);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  const int64_t after = RssBytes(pid);
  std::printf("[deep toml] refused in %.1f ms; server RSS %.1f -> %.1f MB\n",
              ms, before / 1e6, after / 1e6);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(),
              HasSubstr("template_spec: template spec: nested deeper than 32 "
                        "levels"));
  EXPECT_LT(after - before, 50 << 20);

  // The CLI's paths read it the same way: a spec file.
  const std::string file = fleet.dir() + "/deep.toml";
  std::ofstream(file) << deep
                      << ReadAll(SourceDir() +
                                 "/tests/data/templates/saxpy.toml");
  std::filesystem::copy_file(SourceDir() + "/tests/data/templates/saxpy.cl",
                             fleet.dir() + "/saxpy.cl");
  // Under AddressSanitizer no address-space cap: its shadow memory alone
  // exceeds any (tests/support/sanitizers.h).
  const testing::CommandResult space = RunCommand(
      absl::StrCat(testing::kAddressSanitizer ? "" : "ulimit -v 2000000; ",
                   CliBinary(), " space --template ", file, " --shape N=64"));
  EXPECT_NE(space.exit_code, 0);
  EXPECT_THAT(space.err, HasSubstr("nested deeper than 32 levels"))
      << space.err;
}

// --- 6. Control characters in names ---------------------------------------

TEST(Security, NamesWithControlCharactersAreRefusedAndStoredOnesEscaped) {
  FleetHarness fleet("sec_names");
  ASSERT_TRUE(fleet.StartServer());
  // A name that would forge a server log line and clear a terminal.
  const std::string evil =
      "evil\n[server] agent-99 connected: key forged\x1b[2J\x1b]0;title\x07";
  const std::string log = fleet.dir() + "/evil-agent.log";
  Process agent({BinaryDir() + "/device_agent/tunefleet-agent", "--server",
                 fleet.address(), "--key", "evilkey", "--name", evil,
                 "--token-file", fleet.agent_token_file()},
                log);
  // It is refused (and retries); a plain agent is let in meanwhile.
  fleet.StartAgent(0, "plain");
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] { return fleet.Connected("plain") == 1; }, std::chrono::seconds(60)));
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        return ReadAll(log).find("hello.agent_name") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << ReadAll(log);
  EXPECT_THAT(ReadAll(log), HasSubstr("must be printable"));
  EXPECT_EQ(fleet.Connected("evilkey"), 0);
  const std::string server_log = ReadAll(fleet.dir() + "/server.log");
  EXPECT_THAT(server_log, Not(HasSubstr("\x1b")));
  EXPECT_THAT(server_log, Not(HasSubstr("\n[server] agent-99")));
  agent.Kill(SIGKILL);

  // A database written before the check: `tunefleet devices` escapes.
  fleet.server().Kill(SIGKILL);
  {
    auto store = store::Store::Open(fleet.db_path());
    ASSERT_TRUE(store.ok()) << store.status();
    tunefleet::v1::DeviceInfo info;
    info.set_device_name("gpu\x1b[2J\nforged row");
    info.set_driver_version("1.0\x07");
    info.set_max_work_group_size(64);
    ASSERT_TRUE((*store)->UpsertDevice("oldkey", info).ok());
  }
  const testing::CommandResult devices =
      RunCommand(absl::StrCat(CliBinary(), " devices --db ", fleet.db_path()));
  EXPECT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_THAT(devices.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(devices.out, Not(HasSubstr("\x07")));
  EXPECT_THAT(devices.out, HasSubstr("gpu\\x1b[2J\\nforged row"));
  const testing::CommandResult json = RunCommand(
      absl::StrCat(CliBinary(), " devices --json --db ", fleet.db_path()));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, Not(HasSubstr("\x1b")));
}

// --- 7. Refused submissions and the template registry ----------------------

TEST(Security, RefusedSubmissionsRegisterNoTemplate) {
  FleetHarness fleet("sec_registry");
  ASSERT_TRUE(fleet.StartFleet(1, "reg"));
  // More refused submissions than the registry holds templates: each names
  // a device key no agent ever had.
  const int refused = static_cast<int>(templates::kMaxRegisteredTemplates) + 1;
  for (int i = 0; i < refused; ++i) {
    const std::string name = absl::StrCat("refused_", i);
    int64_t job_id = 0;
    const grpc::Status s = fleet.SubmitJob(
        SaxpyJob("no_such_key", "saxpy_r", SaxpySpec(name, "saxpy_r")),
        &job_id);
    ASSERT_FALSE(s.ok()) << i;
    ASSERT_NE(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << i << ": " << s.error_message();
  }
  // A valid user template is still accepted, and runs.
  int64_t job_id = 0;
  const grpc::Status s = fleet.SubmitJob(
      SaxpyJob("reg", "saxpy_ok", SaxpySpec("accepted_t", "saxpy_ok")),
      &job_id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto end = fleet.AwaitEnd(job_id, std::chrono::seconds(120));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->state(), tunefleet::v1::JOB_STATE_DONE);
}

// --- 8. Files holding fleet data -------------------------------------------

TEST(Security, ReportExportAndBackupFilesAreOwnerOnly) {
  FleetHarness fleet("sec_modes");
  ASSERT_TRUE(fleet.StartFleet(1, "modes"));
  const int64_t job_id = fleet.Submit(testing::SmallGemmJob("modes", 2, 0, 1));
  ASSERT_TRUE(fleet.AwaitEnd(job_id, std::chrono::seconds(120)));
  const std::string tf = CliBinary();
  const std::string report = fleet.dir() + "/report.html";
  const std::string table = fleet.dir() + "/table.csv";
  const std::string backup = fleet.dir() + "/backup.db";
  // Files there before are replaced, whatever their mode.
  for (const std::string& f : {report, table, backup}) {
    std::ofstream(f) << "old\n";
    chmod(f.c_str(), 0644);
  }
  const std::vector<std::string> commands = {
      absl::StrCat(tf, " report --db ", fleet.db_path(), " --out ", report),
      absl::StrCat(tf, " export --db ", fleet.db_path(), " --job ", job_id,
                   " --out ", table),
      absl::StrCat(tf, " backup --db ", fleet.db_path(), " --out ", backup)};
  for (const std::string& c : commands) {
    const testing::CommandResult r = RunCommand("umask 022; " + c);
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.err;
  }
  for (const std::string& f : {report, table, backup}) {
    struct stat st {};
    ASSERT_EQ(stat(f.c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
    EXPECT_GT(st.st_size, 4) << f;
  }
}

}  // namespace
}  // namespace tunefleet::testing
