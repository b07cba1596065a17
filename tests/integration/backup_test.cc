// `tunefleet backup` and store::BackupDatabase copy a live database while
// another process keeps writing to it: the copy passes integrity_check and
// holds every row committed before the copy started.
#include "store/backup.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/store_writer.h"
#include "tests/support/temp_store.h"

namespace tunefleet {
namespace {

using testing::IntegrityCheck;
using testing::StoreWriter;
using testing::WriterRows;

// Lets a writer fill the database to at least `rows` rows.
void Fill(const std::string& path, int64_t rows) {
  StoreWriter writer(path, 0);
  ASSERT_TRUE(writer.started());
  while (writer.Committed() < rows) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(Backup, CopiesALiveDatabaseWhileAnotherProcessWrites) {
  testing::TempStore temp("backup_src");
  temp.Close();
  Fill(temp.path(), 6000);  // ~ 8 MB
  const std::string copy = temp.path() + ".copy";
  std::filesystem::remove(copy);

  StoreWriter writer(temp.path(), 1000000);
  ASSERT_TRUE(writer.started());
  while (writer.Committed() < 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const int64_t before = WriterRows(temp.path());
  ASSERT_GT(before, 6000);
  store::BackupOptions options;
  options.pages_per_step = 8;  // many steps while the writer commits
  int steps = 0;
  options.progress = [&](int64_t copied, int64_t total) {
    ++steps;
    EXPECT_LE(copied, total);
  };
  const int64_t committed_before = writer.Committed();
  absl::StatusOr<store::BackupStats> stats =
      store::BackupDatabase(temp.path(), copy, options);
  const int64_t committed_after = writer.Committed();
  writer.Kill();
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::printf(
      "[backup] %lld pages, %lld bytes, %lld ms, %d steps; writer "
      "committed %lld rows during the copy\n",
      static_cast<long long>(stats->pages),
      static_cast<long long>(stats->bytes), static_cast<long long>(stats->ms),
      steps, static_cast<long long>(committed_after - committed_before));
  EXPECT_GT(steps, 100);
  EXPECT_GT(committed_after, committed_before) << "the writer did not run";
  EXPECT_EQ(IntegrityCheck(copy), "ok");
  EXPECT_GE(WriterRows(copy), before);
  EXPECT_EQ(stats->bytes, stats->pages * 4096);
  EXPECT_FALSE(std::filesystem::exists(copy + ".partial"));
  std::filesystem::remove(copy);
}

TEST(Backup, MissingSourceIsNotFoundAndWritesNothing) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "/backup_missing.copy";
  absl::StatusOr<store::BackupStats> stats =
      store::BackupDatabase(dir + "/no_such.db", out);
  EXPECT_TRUE(absl::IsNotFound(stats.status())) << stats.status();
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(dir + "/no_such.db"));
}

TEST(Backup, CommandPrintsJsonOfTheCopy) {
  testing::TempStore temp("backup_cli");
  temp.Close();
  Fill(temp.path(), 200);
  const std::string copy = temp.path() + ".copy";
  StoreWriter writer(temp.path(), 1000000);
  ASSERT_TRUE(writer.started());
  const int64_t before = WriterRows(temp.path());
  const std::string command = std::string(TUNEFLEET_BINARY_DIR) +
                              "/cli/tunefleet backup --db " + temp.path() +
                              " --out " + copy + " --json";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[256];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
  ASSERT_EQ(pclose(pipe), 0) << out;
  writer.Kill();
  const nlohmann::json json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << out;
  EXPECT_GT(json["pages"].get<int64_t>(), 0);
  EXPECT_EQ(json["bytes"].get<int64_t>(), json["pages"].get<int64_t>() * 4096);
  EXPECT_GE(json["ms"].get<int64_t>(), 0);
  EXPECT_EQ(IntegrityCheck(copy), "ok");
  EXPECT_GE(WriterRows(copy), before);
  std::filesystem::remove(copy);
}

}  // namespace
}  // namespace tunefleet
