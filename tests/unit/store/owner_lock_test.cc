// One owner per database (store/owner_lock.h): a second owner is refused,
// naming the first's pid, program and address; a clean release removes the
// lock file; a SIGKILLed owner's lock is free again (the kernel drops it),
// its stale line overwritten. Real files and a real child process.
#include "store/owner_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::store {
namespace {

using ::testing::HasSubstr;

std::string DbPath() {
  return absl::StrCat(
      ::testing::TempDir(), "/owner_", getpid(), "_",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(OwnerLock, ASecondOwnerIsRefusedNamingTheFirst) {
  const std::string db = DbPath();
  std::filesystem::remove(OwnerLock::PathFor(db));
  absl::StatusOr<OwnerLock> first = OwnerLock::Acquire(db, "tunefleet-server");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created());
  ASSERT_TRUE(first->SetAddress("127.0.0.1:7878").ok());
  EXPECT_EQ(ReadLine(OwnerLock::PathFor(db)),
            absl::StrCat("pid=", getpid(),
                         " address=127.0.0.1:7878 program=tunefleet-server"));

  absl::StatusOr<OwnerLock> second = OwnerLock::Acquire(db, "tunefleet tune");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("is owned by tunefleet-server (pid ",
                                     getpid(), ") on 127.0.0.1:7878")));
  EXPECT_THAT(second.status().message(), HasSubstr("read-only commands"));

  // Released: the file is gone and the next owner takes it.
  first->Release();
  EXPECT_FALSE(std::filesystem::exists(OwnerLock::PathFor(db)));
  absl::StatusOr<OwnerLock> third = OwnerLock::Acquire(db, "tunefleet tune");
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_THAT(ReadLine(OwnerLock::PathFor(db)),
              HasSubstr("program=tunefleet tune"));
}

TEST(OwnerLock, AKilledOwnersLockIsFreeAndItsLineReplaced) {
  const std::string db = DbPath();
  std::filesystem::remove(OwnerLock::PathFor(db));
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<OwnerLock> lock = OwnerLock::Acquire(db, "child");
    if (!lock.ok() || !lock->SetAddress("127.0.0.1:1").ok()) _exit(1);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  absl::StatusOr<OwnerLock> refused = OwnerLock::Acquire(db, "parent");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(
      refused.status().message(),
      HasSubstr(absl::StrCat("child (pid ", child, ") on 127.0.0.1:1")));

  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The stale file stays (no clean release) but holds no lock.
  EXPECT_TRUE(std::filesystem::exists(OwnerLock::PathFor(db)));
  absl::StatusOr<OwnerLock> taken = OwnerLock::Acquire(db, "parent");
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_FALSE(taken->created());
  EXPECT_EQ(ReadLine(OwnerLock::PathFor(db)),
            absl::StrCat("pid=", getpid(), " program=parent"));
}

TEST(OwnerLock, MemoryDatabasesAndMissingDirectories) {
  absl::StatusOr<OwnerLock> memory = OwnerLock::Acquire(":memory:", "x");
  ASSERT_TRUE(memory.ok());
  EXPECT_FALSE(memory->held());
  absl::StatusOr<OwnerLock> again = OwnerLock::Acquire(":memory:", "y");
  EXPECT_TRUE(again.ok());
  absl::StatusOr<OwnerLock> missing =
      OwnerLock::Acquire("/nonexistent-dir-tunefleet/x.db", "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent-dir"));
}

}  // namespace
}  // namespace tunefleet::store
