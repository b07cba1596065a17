// The database survives SIGKILL during heavy writes: a writer process
// committing through the Store API is killed at random moments, again and
// again, and after every kill PRAGMA integrity_check says "ok" and every
// commit the writer saw return is in the file. TUNEFLEET_KILLS sets the
// number of kills (10 by default; 50 for the full run).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "tests/support/store_writer.h"
#include "tests/support/temp_store.h"

namespace tunefleet {
namespace {

using testing::IntegrityCheck;
using testing::StoreWriter;
using testing::WriterRows;

int Kills() {
  const char* env = std::getenv("TUNEFLEET_KILLS");
  const int kills = env != nullptr ? std::atoi(env) : 10;
  return kills > 0 ? kills : 10;
}

TEST(KillIntegrity, SigkillDuringWritesLeavesASoundFileWithEveryCommit) {
  testing::TempStore temp("kill_integrity");
  temp.Close();  // the writers open it; the test only reads between kills
  const int kills = Kills();
  const unsigned seed = std::random_device{}();
  std::printf("[kill] %d kills, schedule seed %u\n", kills, seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> run_ms(20, 400);
  int64_t acknowledged = 0;  // rows committed by all writers so far
  for (int k = 0; k < kills; ++k) {
    int64_t committed = 0;
    {
      StoreWriter writer(temp.path(), acknowledged);
      ASSERT_TRUE(writer.started());
      const auto end = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(run_ms(rng));
      while (std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        writer.Committed();
      }
      writer.Kill();
      committed = writer.Committed();
    }
    ASSERT_EQ(IntegrityCheck(temp.path()), "ok") << "after kill " << k + 1;
    const int64_t rows = WriterRows(temp.path());
    // Every commit the writer saw succeed is there; a commit in flight at
    // the kill may be there too.
    ASSERT_GE(rows, acknowledged + committed) << "after kill " << k + 1;
    ASSERT_LE(rows, acknowledged + committed + 1) << "after kill " << k + 1;
    acknowledged = rows;
  }
  std::printf("[kill] %d kills, %lld rows, integrity_check ok every time\n",
              kills, static_cast<long long>(acknowledged));
  EXPECT_GT(acknowledged, 0);
}

}  // namespace
}  // namespace tunefleet
