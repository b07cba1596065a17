// The tunefleet-agent binary as an operator runs it: --version, a bad
// --server, --info, a token the server refuses (unknown, revoked, of the
// wrong role), the log of a job's reference run and the OpenCL library
// loaded at run time (--opencl-library, TUNEFLEET_OPENCL_LIBRARY, the
// default order and its errors). Real processes: a
// tunefleet-server with a tokens file on loopback and the agent on the
// first OpenCL device (PoCL in CI). Every wait is bounded; no test asserts
// on how long anything took.
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/tokens.h"
#include "base/version.h"
#include "gtest/gtest.h"
#include "kernels_templates/workload.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/process.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::testing {
namespace {

// The agent binary; under `timeout`, so that an agent that wrongly keeps
// running ends (exit 124) and fails the test instead of hanging it.
std::string BoundedAgent() {
  return "timeout -k 10 60 " + BinaryDir() + "/device_agent/tunefleet-agent";
}

// Writes `token` to a file in the harness's directory, as a board keeps it.
std::string WriteTokenFile(const FleetHarness& fleet, const std::string& name,
                           const std::string& token) {
  const std::string path = absl::StrCat(fleet.dir(), "/", name, ".token");
  std::ofstream(path) << token << "\n";
  return path;
}

// The exit code of `process` once it has exited, waiting up to `limit`;
// nullopt while it still runs.
std::optional<int> WaitForExit(Process& process,
                               std::chrono::milliseconds limit) {
  const pid_t pid = process.pid();
  if (pid <= 0) return std::nullopt;
  const bool exited = FleetHarness::WaitFor(
      [pid] {
        siginfo_t info{};
        // WNOWAIT: leaves the exit status for Process::Wait() to reap.
        return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
      },
      limit);
  if (!exited) return std::nullopt;
  return process.Wait();
}

TEST(AgentCli, VersionPrintsTheProjectVersion) {
  const auto r = RunCommand(BoundedAgent() + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat("tunefleet-agent ", base::kVersion, "\n"));
}

TEST(AgentCli, ServerWithoutPortOrWithSchemeIsAUsageError) {
  for (const std::string server :
       {"127.0.0.1", "http://127.0.0.1:7878", "127.0.0.1:0"}) {
    const auto r = RunCommand(BoundedAgent() + " --server " + server);
    EXPECT_EQ(r.exit_code, 2) << server << ": " << r.err;
    EXPECT_NE(r.err.find("--server '" + server + "'"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
  }
  const auto r = RunCommand(BoundedAgent() + " --server 127.0.0.1");
  EXPECT_NE(r.err.find("no port"), std::string::npos) << r.err;
}

TEST(AgentCli, InfoPrintsSnakeCaseJson) {
  const auto r = RunCommand(BoundedAgent() + " --info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"device_name\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"compute_units\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"deviceName\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"computeUnits\""), std::string::npos) << r.out;
}

// A server with the harness's agent and tuner tokens and a reader token.
class RefusedToken : public ::testing::Test {
 protected:
  void SetUp() override {
    reader_token_ = *auth::GenerateToken();
    ASSERT_TRUE(
        auth::AppendTokenToFile(fleet_.tokens_file(),
                                auth::TokenEntry::ForToken(
                                    reader_token_, auth::Role::kReader, "dash"))
            .ok());
    ASSERT_TRUE(fleet_.StartServer());
  }

  // Runs an agent with the token in `token_file` to its end.
  testing::CommandResult RunAgent(const std::string& token_file) {
    return RunCommand(BoundedAgent() + " --server " + fleet_.address() +
                      " --key refused --token-file " + token_file);
  }

  FleetHarness fleet_{"agent_cli_refused"};
  std::string reader_token_;
};

TEST_F(RefusedToken, UnknownTokenEndsTheAgent) {
  const auto r =
      RunAgent(WriteTokenFile(fleet_, "unknown", *auth::GenerateToken()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("refused this agent's token"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("UNAUTHENTICATED: unknown access token"),
            std::string::npos)
      << r.err;
  // What to do: check the token file; how to make a token of role agent.
  EXPECT_NE(r.err.find("--token-file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tunefleet token add --tokens TOKENS_FILE --role agent"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(fleet_.Connected("refused"), 0);
}

TEST_F(RefusedToken, TokenOfRoleReaderEndsTheAgent) {
  const auto r = RunAgent(WriteTokenFile(fleet_, "reader", reader_token_));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("refused this agent's token"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("PERMISSION_DENIED"), std::string::npos) << r.err;
  // The server's reason names both roles.
  EXPECT_NE(r.err.find("needs a token of role agent"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("has role reader"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--role agent"), std::string::npos) << r.err;
}

// A serving agent rides out a server restart (UNAVAILABLE, retried), but
// once the restarted server no longer knows its token, it exits.
TEST_F(RefusedToken, TokenRevokedWhileServingEndsTheAgentAfterARestart) {
  fleet_.StartAgent(0, "revoked");
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet_.Connected("revoked") == 1; },
                            std::chrono::seconds(60)));
  // Revoke the agents' token (FleetHarness names it "agents"), then restart
  // the server, which reads the tokens file as it starts.
  absl::StatusOr<int> removed =
      auth::RemoveTokenFromFile(fleet_.tokens_file(), "agents");
  ASSERT_TRUE(removed.ok()) << removed.status();
  ASSERT_EQ(*removed, 1);
  fleet_.server().Kill(SIGKILL);
  ASSERT_TRUE(fleet_.StartServer());
  const std::optional<int> exit_code =
      WaitForExit(fleet_.agent(0), std::chrono::seconds(60));
  const std::string log = ReadAll(absl::StrCat(fleet_.dir(), "/agent-0.log"));
  ASSERT_TRUE(exit_code.has_value()) << "agent still running; log:\n" << log;
  EXPECT_EQ(*exit_code, 1) << log;
  // It was connected, lost the server, retried, and then was refused.
  EXPECT_NE(log.find("connected to"), std::string::npos) << log;
  EXPECT_NE(log.find("reconnecting in"), std::string::npos) << log;
  EXPECT_NE(log.find("UNAUTHENTICATED: unknown access token"),
            std::string::npos)
      << log;
}

// A small GEMM job that measures the reference kernel first.
tunefleet::v1::SubmitJobRequest JobWithReference(const std::string& key) {
  tunefleet::v1::SubmitJobRequest r;
  *r.mutable_workload() = trial::WorkloadToProto(
      *templates::Workload::Parse("gemm", "M=32,N=32,K=32"));
  r.set_device_key(key);
  r.set_strategy(tunefleet::v1::STRATEGY_RANDOM);
  r.set_trials(2);
  r.set_seed(3);
  r.set_skip_reference(false);
  r.set_no_transfer(true);
  r.mutable_timing()->set_repeat(1);
  r.mutable_timing()->set_number(1);
  r.mutable_timing()->set_min_repeat_ms(0);
  return r;
}

TEST(AgentCliLog, ReferenceRunIsLoggedAsTheJobsReference) {
  FleetHarness fleet("agent_cli_reference");
  ASSERT_TRUE(fleet.StartServer());
  fleet.StartAgent(0, "reference");
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet.Connected("reference") == 1; },
                            std::chrono::seconds(60)));
  const int64_t job = fleet.Submit(JobWithReference("reference"));
  ASSERT_GT(job, 0);

  // The reference run is measured first; wait for its log line.
  const std::string log_path = absl::StrCat(fleet.dir(), "/agent-0.log");
  const std::string line = absl::StrCat("job ", job, " reference: ");
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] { return ReadAll(log_path).find(line) != std::string::npos; },
      std::chrono::seconds(240)));
  // And the job's own trials, under their (positive) trial ids.
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto progress = fleet.Job(job);
        return progress && progress->trials_done() == 2;
      },
      std::chrono::seconds(240)));
  const std::string log = ReadAll(log_path);
  EXPECT_NE(log.find(line + "OK"), std::string::npos) << log;
  EXPECT_NE(log.find("] trial "), std::string::npos) << log;
  EXPECT_EQ(log.find("trial -"), std::string::npos) << log;
}

// The OpenCL library loaded at run time (opencl/opencl_loader.h).

// The file that `ldconfig -p` lists for the ICD loader libOpenCL.so.1,
// resolved through its symlinks (e.g. .../libOpenCL.so.1.0.0): a path that
// the default order never names. Empty when ldconfig lists none.
std::string IcdLoaderRealPath() {
  const auto r = RunCommand("/sbin/ldconfig -p");
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    const size_t arrow = line.find("=> ");
    if (line.find("libOpenCL.so.1 ") == absl::string_view::npos ||
        arrow == absl::string_view::npos) {
      continue;
    }
    std::error_code error;
    const std::filesystem::path real =
        std::filesystem::canonical(std::string(line.substr(arrow + 3)), error);
    if (!error) return real.string();
  }
  return "";
}

TEST(AgentCliOpenCl, HelpDocumentsTheFlagAndTheEnvironmentVariable) {
  const auto r = RunCommand(BoundedAgent() + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--opencl-library"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TUNEFLEET_OPENCL_LIBRARY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/vendor/lib64/libOpenCL.so"), std::string::npos)
      << r.out;
}

TEST(AgentCliOpenCl, InfoThroughAnExplicitLibraryPrintsTheDevice) {
  const std::string library = IcdLoaderRealPath();
  ASSERT_FALSE(library.empty()) << "ldconfig -p lists no libOpenCL.so.1";
  // The flag wins over a bogus environment variable.
  const auto r =
      RunCommand("TUNEFLEET_OPENCL_LIBRARY=/nonexistent/env/libOpenCL.so " +
                 BoundedAgent() + " --info --opencl-library " + library);
  ASSERT_EQ(r.exit_code, 0) << library << ": " << r.err;
  EXPECT_NE(r.out.find("\"device_name\""), std::string::npos) << r.out;
}

TEST(AgentCliOpenCl, InfoInTheDefaultOrderPrintsTheDevice) {
  const auto r = RunCommand("env -u TUNEFLEET_OPENCL_LIBRARY " +
                            BoundedAgent() + " --info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"device_name\""), std::string::npos) << r.out;
}

TEST(AgentCliOpenCl, MissingExplicitLibraryExits1NamingIt) {
  const auto r = RunCommand(
      BoundedAgent() + " --info --opencl-library /nonexistent/libOpenCL.so");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  // The path and dlerror()'s reason; no fallback to the default order.
  EXPECT_NE(r.err.find("tried: /nonexistent/libOpenCL.so (/nonexistent/"
                       "libOpenCL.so: cannot open shared object file"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("libOpenCL.so.1"), std::string::npos) << r.err;
}

TEST(AgentCliOpenCl, BogusEnvironmentLibraryExits1NamingIt) {
  const auto r =
      RunCommand("TUNEFLEET_OPENCL_LIBRARY=/nonexistent/env/libOpenCL.so " +
                 BoundedAgent() + " --info");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("(TUNEFLEET_OPENCL_LIBRARY)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("/nonexistent/env/libOpenCL.so: cannot open shared "
                       "object file"),
            std::string::npos)
      << r.err;
}

TEST(AgentCliOpenCl, LibraryWithoutOpenClIsRefused) {
  const auto r =
      RunCommand(BoundedAgent() + " --info --opencl-library libc.so.6");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("libc.so.6 (loaded, but has no clGetPlatformIDs)"),
            std::string::npos)
      << r.err;
}

// With no OpenCL library to be found (the ICD loader's files hidden behind
// empty files in a private mount namespace), the error names every path of
// the default order. Needs unprivileged user namespaces (unshare -rm).
TEST(AgentCliOpenCl, NoLibraryInTheDefaultOrderNamesEveryPathTried) {
  if (RunCommand("unshare -rm true").exit_code != 0) {
    GTEST_SKIP() << "unshare -rm is not permitted here";
  }
  const std::string library = IcdLoaderRealPath();
  ASSERT_FALSE(library.empty()) << "ldconfig -p lists no libOpenCL.so.1";
  const std::string empty = (std::filesystem::temp_directory_path() /
                             absl::StrCat("tf_empty_opencl_", getpid()))
                                .string();
  std::ofstream{empty};
  const auto r = RunCommand(absl::StrCat(
      "env -u TUNEFLEET_OPENCL_LIBRARY unshare -rm sh -c 'mount --bind ", empty,
      " ", library, " && exec ", BoundedAgent(), " --info'"));
  std::filesystem::remove(empty);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  for (const std::string path :
       {"libOpenCL.so.1 (", "libOpenCL.so (", "/vendor/lib64/libOpenCL.so (",
        "/system/vendor/lib64/libOpenCL.so (",
        "/system/lib64/libOpenCL.so ("}) {
    const bool named = r.err.find("tried: " + path) != std::string::npos ||
                       r.err.find("; " + path) != std::string::npos;
    EXPECT_TRUE(named) << path << " not named in: " << r.err;
  }
  EXPECT_NE(r.err.find("--opencl-library PATH"), std::string::npos) << r.err;
}

// Serving with --opencl-library: the worker processes load the same library
// (a bogus TUNEFLEET_OPENCL_LIBRARY in the agent's environment would fail
// every trial if the flag did not reach them).
TEST(AgentCliOpenCl, ServedTrialsRunThroughTheExplicitLibrary) {
  const std::string library = IcdLoaderRealPath();
  ASSERT_FALSE(library.empty()) << "ldconfig -p lists no libOpenCL.so.1";
  FleetHarness fleet("agent_cli_opencl_library");
  ASSERT_TRUE(fleet.StartServer());
  const std::string log_path = absl::StrCat(fleet.dir(), "/agent-lib.log");
  Process agent(
      {"/usr/bin/env", "TUNEFLEET_OPENCL_LIBRARY=/nonexistent/env/libOpenCL.so",
       BinaryDir() + "/device_agent/tunefleet-agent", "--opencl-library",
       library, "--server", fleet.address(), "--key", "explicit",
       "--token-file", fleet.agent_token_file()},
      log_path);
  ASSERT_TRUE(
      FleetHarness::WaitFor([&] { return fleet.Connected("explicit") == 1; },
                            std::chrono::seconds(60)))
      << ReadAll(log_path);
  const int64_t job = fleet.Submit(JobWithReference("explicit"));
  ASSERT_GT(job, 0);
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto progress = fleet.Job(job);
        return progress && progress->trials_done() == 2;
      },
      std::chrono::seconds(240)))
      << ReadAll(log_path);
  const auto progress = fleet.Job(job);
  ASSERT_TRUE(progress.has_value());
  // Trials per Measurement.Error name: every one OK.
  for (const auto& [error, trials] : progress->errors()) {
    EXPECT_EQ(error, "OK") << trials << " trials";
  }
  EXPECT_EQ(
      progress->errors().count("OK") == 1 ? progress->errors().at("OK") : 0u,
      2u)
      << progress->DebugString();
  const std::string log = ReadAll(log_path);
  EXPECT_NE(log.find(absl::StrCat("job ", job, " reference: OK")),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("cannot load the OpenCL library"), std::string::npos)
      << log;
}

}  // namespace
}  // namespace tunefleet::testing
