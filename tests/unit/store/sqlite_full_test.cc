// SQLite's "disk full" (SQLITE_FULL) becomes RESOURCE_EXHAUSTED naming the
// database file. A real file whose page limit (PRAGMA max_page_count) is
// reached gives SQLite the same error a full filesystem does.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/sqlite.h"

namespace tunefleet::store {
namespace {

TEST(SqliteFull, AFullDatabaseIsResourceExhaustedNamingTheFile) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/sqlite_full_", getpid(), ".db");
  std::filesystem::remove(path);
  {
    absl::StatusOr<Database> db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(
        db->Exec("CREATE TABLE t (v TEXT); PRAGMA max_page_count = 8").ok());
    absl::Status status;
    for (int i = 0; i < 100 && status.ok(); ++i) {
      status = db->Run("INSERT INTO t (v) VALUES (?1)", std::string(2000, 'x'));
    }
    EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
    EXPECT_NE(status.message().find("database disk full: "),
              absl::string_view::npos)
        << status;
    EXPECT_NE(status.message().find("sqlite_full_"), absl::string_view::npos)
        << status;
    EXPECT_NE(status.message().find("free space and retry"),
              absl::string_view::npos);
    // Exec reports it the same way.
    const absl::Status exec = db->Exec(absl::StrCat(
        "INSERT INTO t (v) VALUES ('", std::string(40000, 'y'), "')"));
    EXPECT_TRUE(absl::IsResourceExhausted(exec)) << exec;
    // Other failures stay INTERNAL.
    const absl::Status other = db->Exec("INSERT INTO no_such_table VALUES (1)");
    EXPECT_TRUE(absl::IsInternal(other)) << other;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tunefleet::store
