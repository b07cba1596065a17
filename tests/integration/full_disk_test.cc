// The server's database on a small filesystem that fills up mid-job: the
// server stays up, refuses new jobs with RESOURCE_EXHAUSTED naming the
// database, loses no result it acknowledged (every trial of the job ends
// done exactly once), and takes new work again once space returns.
//
// The small filesystem is a tmpfs mounted in a mount namespace of the
// server's own (unshare --mount as root, unshare --user --map-root-user
// --mount otherwise); the test reaches it through /proc/<server pid>/root
// and fills it with a ballast file, deleted to free the space. Skipped,
// with the reason, where neither way of mounting works (a container
// without CAP_SYS_ADMIN and without user namespaces).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "contract/names.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/store_writer.h"
#include "tests/support/stored_trials.h"

namespace tunefleet {
namespace {

using testing::FleetHarness;
using testing::Process;
using tunefleet::v1::JobProgress;

// The command prefix that runs a program in a mount namespace of its own
// where it may mount a tmpfs; empty when there is none here. Probed by
// mounting one on `dir`.
std::vector<std::string> MountNamespacePrefix(const std::string& dir) {
  std::string unshare;
  for (const char* path : {"/usr/bin/unshare", "/bin/unshare"}) {
    if (access(path, X_OK) == 0) {
      unshare = path;
      break;
    }
  }
  if (unshare.empty()) return {};
  std::vector<std::vector<std::string>> candidates;
  if (geteuid() == 0) candidates.push_back({unshare, "--mount"});
  candidates.push_back({unshare, "--user", "--map-root-user", "--mount"});
  for (const auto& prefix : candidates) {
    std::string command;
    for (const std::string& word : prefix) command += word + " ";
    command +=
        "sh -c 'mount -t tmpfs -o size=1m tmpfs " + dir + "' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return prefix;
  }
  return {};
}

// Fills the filesystem of `path`'s directory: writes `path` until the
// disk is full. Returns the bytes written.
int64_t FillDisk(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return -1;
  const std::string chunk(64 * 1024, 'b');
  int64_t written = 0;
  while (true) {
    const ssize_t n = write(fd, chunk.data(), chunk.size());
    if (n <= 0) break;
    written += n;
  }
  // Then single bytes, so that not even one page is left.
  while (write(fd, "b", 1) == 1) ++written;
  close(fd);
  return written;
}

// A small GEMM job for key "chaos" (SmallGemmJob), 150 ms a trial.
tunefleet::v1::SubmitJobRequest DiskGemmJob(uint32_t trials, uint64_t seed) {
  return testing::SmallGemmJob("chaos", trials, 150, seed);
}

bool Alive(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) == 0; }

// Each config once, every trial done (none cancelled), exactly `budget`.
void ExpectStoredExactlyOnce(const std::string& db, int64_t job_id,
                             size_t budget) {
  const std::vector<store::Trial> rows = testing::StoredTrials(db, job_id);
  std::set<uint64_t> configs;
  size_t finished = 0;
  std::map<std::string, int> states;
  for (const store::Trial& t : rows) {
    ++states[absl::StrCat(tunefleet::v1::TrialState_Name(t.state), "/",
                          tunefleet::v1::Measurement::Error_Name(t.error))];
  }
  for (const auto& [state, count] : states) {
    std::printf("[full_disk] job %lld: %d trial(s) %s\n",
                static_cast<long long>(job_id), count, state.c_str());
  }
  for (const store::Trial& t : rows) {
    EXPECT_TRUE(configs.insert(t.config_index).second)
        << "job " << job_id << ": config " << t.config_index << " twice";
    if (t.state == tunefleet::v1::TRIAL_STATE_DONE &&
        t.error != tunefleet::v1::Measurement::CANCELLED) {
      ++finished;
    }
  }
  EXPECT_EQ(finished, budget) << "job " << job_id;
  EXPECT_EQ(rows.size(), budget) << "job " << job_id;
}

TEST(FullDisk, ServerRefusesNewWorkLosesNoResultAndResumes) {
  FleetHarness fleet("full_disk");
  const std::string mount_dir = fleet.dir() + "/small";
  std::filesystem::create_directories(mount_dir);
  const std::vector<std::string> prefix = MountNamespacePrefix(mount_dir);
  if (prefix.empty()) {
    GTEST_SKIP()
        << "no way to mount a small filesystem here: neither "
           "util-linux `unshare --mount` (needs root) nor `unshare --user "
           "--map-root-user --mount` (needs user namespaces) can "
           "mount a tmpfs";
  }
  const std::string db = mount_dir + "/fleet.db";
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(),
              {"sh", "-c",
               "mount -t tmpfs -o size=16m tmpfs " + mount_dir + " && exec " +
                   testing::BinaryDir() + "/server/tunefleet-server --listen " +
                   fleet.address() + " --db " + db +
                   " --heartbeat-ms 600 --tokens " + fleet.tokens_file()});
  Process server(argv, fleet.dir() + "/server.log");
  ASSERT_TRUE(FleetHarness::WaitFor([&] { return fleet.Devices().has_value(); },
                                    std::chrono::seconds(30)))
      << "server did not come up; see " << fleet.dir() << "/server.log";
  // The server's view of its files: through its own root.
  const std::string seen =
      "/proc/" + std::to_string(server.pid()) + "/root" + db;
  const std::string ballast = "/proc/" + std::to_string(server.pid()) +
                              "/root" + mount_dir + "/ballast";
  ASSERT_TRUE(fleet.StartAgents(1, "chaos"));

  constexpr uint32_t kTrials = 30;
  int64_t job_a = 0;
  ASSERT_TRUE(fleet.SubmitJob(DiskGemmJob(kTrials, 5), &job_a).ok());
  ASSERT_TRUE(FleetHarness::WaitFor(
      [&] {
        auto p = fleet.Job(job_a);
        return p && p->trials_done() >= 4;
      },
      std::chrono::seconds(120)));

  // The disk fills up while results keep arriving.
  const int64_t filled = FillDisk(ballast);
  ASSERT_GT(filled, 0);
  std::printf("[full_disk] ballast of %lld bytes fills the disk at %u done\n",
              static_cast<long long>(filled), fleet.Job(job_a)->trials_done());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ASSERT_TRUE(Alive(server.pid())) << "the server died of a full disk";
  ASSERT_TRUE(fleet.Devices().has_value()) << "the server stopped answering";

  int64_t job_b = 0;
  const grpc::Status refused = fleet.SubmitJob(DiskGemmJob(8, 6), &job_b);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("database disk full: " + db),
            std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("free space and retry"),
            std::string::npos);
  std::printf("[full_disk] refused: %s\n", refused.error_message().c_str());
  auto during = fleet.Job(job_a);
  ASSERT_TRUE(during.has_value());
  std::printf("[full_disk] job A during the full disk: %u done, state %s\n",
              during->trials_done(),
              contract::JobStateName(during->state()).c_str());

  // Space returns: new work is taken again and job A finishes.
  ASSERT_TRUE(std::filesystem::remove(ballast));
  const grpc::Status accepted = fleet.SubmitJob(DiskGemmJob(8, 6), &job_b);
  ASSERT_TRUE(accepted.ok()) << accepted.error_message();
  // Both jobs end once space returns (alone they take about 10 s; one run
  // beside the quickstart on 2 cores took 90 s).
  EXPECT_TRUE(FleetHarness::WaitFor(
      [&] {
        return testing::JobEnded(fleet.Job(job_a)) &&
               testing::JobEnded(fleet.Job(job_b));
      },
      testing::kFleetJobLimit))
      << "jobs did not end after space returned";
  const JobProgress a = *fleet.Job(job_a);
  const JobProgress b = *fleet.Job(job_b);
  std::printf("[full_disk] job A %s, %u/%u done; job B %s, %u/%u done\n",
              contract::JobStateName(a.state()).c_str(), a.trials_done(),
              a.trials_total(), contract::JobStateName(b.state()).c_str(),
              b.trials_done(), b.trials_total());
  EXPECT_EQ(a.state(), tunefleet::v1::JOB_STATE_DONE) << a.message();
  EXPECT_EQ(a.trials_done(), kTrials);
  EXPECT_EQ(b.trials_done(), 8u);
  // SQLite resolves symbolic links in a database's path, and
  // /proc/PID/root is one (to "/" as this process sees it), so the files
  // are copied out of the server's namespace and read here. The jobs have
  // ended: nothing writes while they are copied.
  const std::string copy = fleet.dir() + "/copy.db";
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    std::filesystem::copy_file(
        seen + suffix, copy + suffix,
        std::filesystem::copy_options::overwrite_existing, ec);
    ASSERT_TRUE(!ec || std::string(suffix) == "-wal") << ec.message();
  }
  ExpectStoredExactlyOnce(copy, job_a, kTrials);
  ExpectStoredExactlyOnce(copy, job_b, 8);
  EXPECT_EQ(testing::IntegrityCheck(copy), "ok");
  // Show what the server said while the disk was full.
  std::ifstream log(fleet.dir() + "/server.log");
  std::string line;
  int full_lines = 0;
  while (std::getline(log, line)) {
    if (line.find("disk full") != std::string::npos && full_lines++ < 5) {
      std::printf("[full_disk] server log: %s\n", line.c_str());
    }
  }
  std::printf("[full_disk] %d server log lines name the full disk\n",
              full_lines);
}

}  // namespace
}  // namespace tunefleet
