// DiskGuard against the real filesystem of the test's temp directory.
#include "server/disk_guard.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tunefleet::server {
namespace {

std::string DbPath() { return ::testing::TempDir() + "/guard.db"; }

TEST(DiskGuard, PassesWithRoomAndOnAnInMemoryDatabase) {
  ASSERT_GT(DiskGuard::FreeBytes(DbPath()), 4 << 20)
      << "the test needs a few MiB free in " << ::testing::TempDir();
  DiskGuard guard(DbPath());
  EXPECT_TRUE(guard.Check().ok());
  EXPECT_TRUE(DiskGuard(":memory:", UINT64_MAX / 4).Check().ok());
  EXPECT_TRUE(DiskGuard("", UINT64_MAX / 4).Check().ok());
}

TEST(DiskGuard, RefusesBelowTheMinimumNamingTheDatabase) {
  const int64_t free = DiskGuard::FreeBytes(DbPath());
  ASSERT_GT(free, 0);
  DiskGuard guard(DbPath(), static_cast<uint64_t>(free) * 4);
  const absl::Status s = guard.Check();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find(absl::StrCat("database disk full: ", DbPath(),
                                          ": free space and retry")),
            absl::string_view::npos)
      << s;
}

TEST(DiskGuard, AFullDiskErrorRaisesTheBarUntilSpaceReturns) {
  const int64_t free = DiskGuard::FreeBytes(DbPath());
  ASSERT_GT(free, 0);
  // Free space between the minimum and twice it: passes until a store
  // error says the disk was full, then refused.
  DiskGuard guard(DbPath(), static_cast<uint64_t>(free) * 2 / 3);
  EXPECT_TRUE(guard.Check().ok());
  guard.Note(absl::InternalError("sqlite: something else"));
  EXPECT_TRUE(guard.Check().ok());
  guard.Note(absl::ResourceExhaustedError(
      "database disk full: x.db: free space and retry"));
  EXPECT_TRUE(absl::IsResourceExhausted(guard.Check()));
}

}  // namespace
}  // namespace tunefleet::server
